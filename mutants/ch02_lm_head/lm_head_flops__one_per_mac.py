EXERCISE = 'lm_head_flops'
MISTAKE = 'counted a multiply-add as one operation'
EXPECT = 'counted a multiply-add as one'

import torch
import torch.nn.functional as F


def lm_head_flops(d, V, positions=1):
    return d * V * positions
