EXERCISE = 'lookup_onehot'
MISTAKE = 'plain indexing: the right rows, but no product with E'
EXPECT = 'matrix product'

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    return E[ids]
