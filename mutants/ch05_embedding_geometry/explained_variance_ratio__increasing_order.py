EXERCISE = 'explained_variance_ratio'
MISTAKE = 'eigvalsh order kept: increasing instead of decreasing'
EXPECT = 'reversed'

import torch


def explained_variance_ratio(X):

    Xc = X - X.mean(dim=0)
    m = min(X.shape)
    evals = torch.linalg.eigvalsh(Xc.T @ Xc / (X.shape[0] - 1))
    return (evals / evals.sum())[-m:]
