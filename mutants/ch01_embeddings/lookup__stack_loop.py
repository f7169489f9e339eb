EXERCISE = 'lookup'
MISTAKE = 'a Python loop with torch.stack: fails on empty and 0-d ids'
EXPECT = None

import torch
import torch.nn.functional as F


def lookup(E, ids):
    rows = [E[int(i)] for i in ids.reshape(-1)]
    return torch.stack(rows).reshape(*ids.shape, E.shape[1])
