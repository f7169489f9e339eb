EXERCISE = 'lookup'
MISTAKE = 'flattened the ids: returns [N, d] instead of [*ids.shape, d]'
EXPECT = 'ids.shape'

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return E[ids.reshape(-1)]
