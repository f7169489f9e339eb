EXERCISE = 'lookup'
MISTAKE = 'took columns E[:, ids] instead of rows'
EXPECT = 'columns'

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return E[:, ids].T
