EXERCISE = 'pca'
MISTAKE = 'projected the raw X instead of X - mean'
EXPECT = 'projected the raw X'

import torch


def pca(X, k):

    Xc = X - X.mean(dim=0)
    U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
    components = Vh[:k]
    return X @ components.T, components, S[:k] ** 2 / (S ** 2).sum()
