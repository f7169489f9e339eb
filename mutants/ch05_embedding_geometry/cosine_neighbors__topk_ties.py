EXERCISE = 'cosine_neighbors'
MISTAKE = 'torch.topk: no promised order among tied similarities'
EXPECT = "torch.topk promises no order"

import torch


def cosine_neighbors(E, index, k):

    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    sims[index] = -float("inf")
    return torch.topk(sims, k).indices
