EXERCISE = 'explained_variance_ratio'
MISTAKE = 'returned the variances S**2 / (n - 1) instead of their share'
EXPECT = 'not their share'

import torch


def explained_variance_ratio(X):

    S = torch.linalg.svdvals(X - X.mean(dim=0))
    return S ** 2 / (X.shape[0] - 1)
