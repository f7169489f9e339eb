EXERCISE = "cosine_neighbors"
MISTAKE = "masks the query row with the finite sentinel -1 (the smallest cosine) instead of excluding it: it ties with an opposite row"
EXPECT = 'finite sentinel'
import torch


def cosine_neighbors(E, index, k):
    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    sims[index] = -1.0
    return torch.sort(sims, descending=True, stable=True).indices[:k]
