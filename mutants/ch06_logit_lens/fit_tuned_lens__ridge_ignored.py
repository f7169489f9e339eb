"""the ridge is ignored: a plain least-squares fit (lstsq, minimum norm)."""
EXERCISE = 'fit_tuned_lens'
MISTAKE = 'the ridge is ignored: a plain least-squares fit (lstsq, minimum norm)'
EXPECT = 'ridge term is missing'

import torch


def fit_tuned_lens(h_layer, h_final, ridge):
    X, Y = h_layer.double(), h_final.double()
    xm, ym = X.mean(0), Y.mean(0)
    A = torch.linalg.lstsq(X - xm, Y - ym, driver="gelsd").solution
    return A.to(h_layer.dtype), (ym - xm @ A).to(h_layer.dtype)
