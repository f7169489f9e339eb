EXERCISE = 'pca'
MISTAKE = 'SVD of X without subtracting the mean row'
EXPECT = 'without centring'

import torch


def pca(X, k):

    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    components = Vh[:k]
    return X @ components.T, components, S[:k] ** 2 / (S ** 2).sum()
