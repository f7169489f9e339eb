EXERCISE = 'cosine_neighbors'
MISTAKE = 'ranked by Euclidean distance'
EXPECT = 'Euclidean distance'

import torch


def cosine_neighbors(E, index, k):

    dist = (E - E[index]).norm(dim=1)
    dist[index] = float("inf")
    return torch.sort(dist, stable=True).indices[:k]
