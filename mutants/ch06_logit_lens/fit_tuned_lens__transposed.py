"""returned A.T (the nn.Linear weight layout) for a prediction h_layer @ A + b."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'returned A.T (the nn.Linear weight layout) for a prediction h_layer @ A + b'
EXPECT = 'transposed'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    xm, ym = X.mean(0), Y.mean(0)
    Xc, Yc = X - xm, Y - ym
    A = torch.linalg.solve(Xc.T @ Xc + ridge * torch.eye(X.shape[1], dtype=torch.float64), Xc.T @ Yc)
    return A.T.to(h_layer.dtype), (ym - xm @ A).to(h_layer.dtype)
