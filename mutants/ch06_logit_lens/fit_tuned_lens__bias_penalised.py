"""a column of ones appended and the ridge applied to the bias too."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'a column of ones appended and the ridge applied to the bias too'
EXPECT = 'penalised the bias'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X = torch.cat([h_layer.double(), torch.ones(h_layer.shape[0], 1, dtype=torch.float64)], 1)
    sol = torch.linalg.solve(X.T @ X + ridge * torch.eye(X.shape[1], dtype=torch.float64), X.T @ h_final.double())
    return sol[:-1].to(h_layer.dtype), sol[-1].to(h_layer.dtype)
