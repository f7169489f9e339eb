EXERCISE = 'lookup'
MISTAKE = 'index_select, which only takes 1-D ids (2-D, 3-D and 0-d ids fail)'
EXPECT = 'ids.shape'

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return torch.index_select(E, 0, ids)
