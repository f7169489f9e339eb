EXERCISE = 'explained_variance_ratio'
MISTAKE = ("one-pass covariance E[x x^T] - mean mean^T in X's dtype: cancellation with a large "
           'mean in float32')
EXPECT = 'cancellation'

import torch


def explained_variance_ratio(X):

    n, m = X.shape[0], min(X.shape)
    mean = X.mean(dim=0)
    cov = (X.T @ X - n * torch.outer(mean, mean)) / (n - 1)
    evals = torch.linalg.eigvalsh(cov).flip(0).clamp(min=0)[:m]
    return evals / evals.sum()
