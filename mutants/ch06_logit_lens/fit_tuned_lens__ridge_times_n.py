"""the ridge multiplied by the number of rows (a mean squared error objective)."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'the ridge multiplied by the number of rows (a mean squared error objective)'
EXPECT = 'scaled the ridge by the number of rows'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    xm, ym = X.mean(0), Y.mean(0)
    Xc, Yc = X - xm, Y - ym
    A = torch.linalg.solve(Xc.T @ Xc + ridge * X.shape[0] * torch.eye(X.shape[1], dtype=torch.float64), Xc.T @ Yc)
    return A.to(h_layer.dtype), (ym - xm @ A).to(h_layer.dtype)
