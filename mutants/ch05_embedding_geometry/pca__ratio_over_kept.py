EXERCISE = 'pca'
MISTAKE = 'ratio divided by the variance of the k kept components only'
EXPECT = 'kept components only'

import torch


def pca(X, k):

    Xc = X - X.mean(dim=0)
    U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
    components = Vh[:k]
    return Xc @ components.T, components, S[:k] ** 2 / (S[:k] ** 2).sum()
