EXERCISE = 'pca'
MISTAKE = 'eigh of the covariance without reversing: the directions of smallest variance'
EXPECT = 'SMALLEST'

import torch


def pca(X, k):

    Xc = X - X.mean(dim=0)
    evals, evecs = torch.linalg.eigh(Xc.T @ Xc / (X.shape[0] - 1))
    components = evecs[:, :k].T.contiguous()
    return Xc @ components.T, components, evals[:k] / evals.sum()
