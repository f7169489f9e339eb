EXERCISE = 'cosine_neighbors'
MISTAKE = 'sorted everything and dropped the first result, assuming it is the query'
EXPECT = 'Dropping the first result is not enough'

import torch


def cosine_neighbors(E, index, k):

    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    return torch.sort(sims, descending=True, stable=True).indices[1:k + 1]
