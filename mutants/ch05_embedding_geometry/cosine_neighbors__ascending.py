EXERCISE = 'cosine_neighbors'
MISTAKE = 'sorted in increasing order of similarity'
EXPECT = 'increasing order'

import torch


def cosine_neighbors(E, index, k):

    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    sims[index] = float("inf")
    return torch.sort(sims, stable=True).indices[:k]
