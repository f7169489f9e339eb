EXERCISE = 'lookup'
MISTAKE = 'took columns E[:, ids] instead of rows'
EXPECT = None

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return E[:, ids].T
