EXERCISE = 'lookup_onehot'
MISTAKE = 'F.one_hot(ids) without num_classes: V is taken from ids.max() + 1'
EXPECT = None

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    return F.one_hot(ids).to(E.dtype) @ E
