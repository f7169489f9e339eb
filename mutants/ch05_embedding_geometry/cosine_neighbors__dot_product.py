EXERCISE = 'cosine_neighbors'
MISTAKE = 'ranked by the dot product E @ E[index]'
EXPECT = 'dot product instead of cosine'

import torch


def cosine_neighbors(E, index, k):

    sims = E @ E[index]
    sims[index] = -float("inf")
    return torch.sort(sims, descending=True, stable=True).indices[:k]
