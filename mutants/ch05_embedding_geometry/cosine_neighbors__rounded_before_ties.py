EXERCISE = "cosine_neighbors"
MISTAKE = "rounds the cosines to 4 decimals before sorting, so close neighbours tie and the lower index wins"
EXPECT = 'rounded the cosines'
import torch


def cosine_neighbors(E, index, k):
    unit = E / E.norm(dim=1, keepdim=True)
    sims = (unit @ unit[index]).round(decimals=4)
    sims[index] = -float("inf")
    return torch.sort(sims, descending=True, stable=True).indices[:k]
