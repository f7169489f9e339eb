EXERCISE = 'pca'
MISTAKE = 'returned V[:, :k] (components as columns)'
EXPECT = 'one component per ROW'

import torch


def pca(X, k):

    Xc = X - X.mean(dim=0)
    U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
    components = Vh[:k].T
    return Xc @ components, components, S[:k] ** 2 / (S ** 2).sum()
