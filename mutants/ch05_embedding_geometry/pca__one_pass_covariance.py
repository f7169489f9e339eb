EXERCISE = 'pca'
MISTAKE = ("covariance by one pass, E[x x^T] - mean mean^T, in X's dtype: catastrophic "
           'cancellation with a large mean in float32')
EXPECT = 'cancellation'

import torch


def pca(X, k):

    n = X.shape[0]
    mean = X.mean(dim=0)
    cov = (X.T @ X - n * torch.outer(mean, mean)) / (n - 1)
    evals, evecs = torch.linalg.eigh(cov)
    evals, evecs = evals.flip(0).clamp(min=0), evecs.flip(1)
    components = evecs[:, :k].T.contiguous()
    return (X - mean) @ components.T, components, evals[:k] / evals.sum()
