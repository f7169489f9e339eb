EXERCISE = 'lookup_onehot'
MISTAKE = 'one-hot times E summed over V, elementwise: no matrix product'
EXPECT = 'matrix product'

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    one_hot = F.one_hot(ids, num_classes=E.shape[0]).to(E.dtype)
    return (one_hot[..., None] * E).sum(dim=-2)
