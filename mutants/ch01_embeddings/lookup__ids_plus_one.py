EXERCISE = 'lookup'
MISTAKE = 'indexed with ids + 1 (as if ids started at 1)'
EXPECT = 'ids + 1'

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return E[(ids + 1).clamp(max=E.shape[0] - 1)]
