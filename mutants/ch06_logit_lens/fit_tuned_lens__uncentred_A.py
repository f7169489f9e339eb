"""A fitted on the raw (uncentred) states, then b set from the means as if A had been fitted on centred ones."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'A solved on uncentred data, then b = mean(h_final) - mean(h_layer) @ A'
EXPECT = 'on the raw states'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    A = torch.linalg.solve(X.T @ X + ridge * torch.eye(X.shape[1], dtype=torch.float64), X.T @ Y)
    b = Y.mean(dim=0) - X.mean(dim=0) @ A
    return A.to(h_layer.dtype), b.to(h_layer.dtype)
