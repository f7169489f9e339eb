EXERCISE = 'explained_variance_ratio'
MISTAKE = 'eigenvalues of the d x d covariance: d values where min(n, d) are asked for'
EXPECT = 'min(n, d)'

import torch


def explained_variance_ratio(X):

    Xc = X - X.mean(dim=0)
    evals = torch.linalg.eigvalsh(Xc.T @ Xc / (X.shape[0] - 1)).flip(0)
    return evals / evals.sum()
