"""b = mean(h_final) - mean(h_layer), forgetting that the mean of h_layer goes through A."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'b = mean(h_final) - mean(h_layer), forgetting that the mean of h_layer goes through A'
EXPECT = 'mean of the PREDICTION'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    xm, ym = X.mean(0), Y.mean(0)
    Xc, Yc = X - xm, Y - ym
    A = torch.linalg.solve(Xc.T @ Xc + ridge * torch.eye(X.shape[1], dtype=torch.float64), Xc.T @ Yc)
    return A.to(h_layer.dtype), (ym - xm).to(h_layer.dtype)
