EXERCISE = 'explained_variance_ratio'
MISTAKE = 'singular values of X without centring'
EXPECT = 'without centring'

import torch


def explained_variance_ratio(X):

    S = torch.linalg.svdvals(X)
    return S ** 2 / (S ** 2).sum()
