EXERCISE = 'explained_variance_ratio'
MISTAKE = 'ratio of singular values, not of their squares'
EXPECT = 'singular values themselves'

import torch


def explained_variance_ratio(X):

    S = torch.linalg.svdvals(X - X.mean(dim=0))
    return S / S.sum()
