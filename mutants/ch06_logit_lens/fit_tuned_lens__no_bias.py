"""no centring and no bias: A fitted on the raw states, b = 0."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'no centring and no bias: A fitted on the raw states, b = 0'
EXPECT = 'no bias term'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    A = torch.linalg.solve(X.T @ X + ridge * torch.eye(X.shape[1], dtype=torch.float64), X.T @ Y)
    return A.to(h_layer.dtype), torch.zeros(Y.shape[1], dtype=h_layer.dtype)
