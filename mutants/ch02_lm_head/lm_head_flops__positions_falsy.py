EXERCISE = 'lm_head_flops'
MISTAKE = '`positions = positions or 1`: zero positions counted as one'
EXPECT = 'positions = 0'

import torch
import torch.nn.functional as F


def lm_head_flops(d, V, positions=1):
    positions = positions or 1
    return 2 * d * V * positions
