EXERCISE = 'cosine_neighbors'
MISTAKE = "E.norm(...) + 1e-8 'to avoid dividing by zero': a row a few 1e-9 long gets its cosine shrunk towards 0"
EXPECT = 'an epsilon added to the norms'

import torch


def cosine_neighbors(E, index, k):
    unit = E / (E.norm(dim=1, keepdim=True) + 1e-8)
    sims = unit @ unit[index]
    sims[index] = -float("inf")
    return torch.sort(sims, descending=True, stable=True).indices[:k]
