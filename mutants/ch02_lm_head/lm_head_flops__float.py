EXERCISE = 'lm_head_flops'
MISTAKE = 'a float result'
EXPECT = 'returned a float'

import torch
import torch.nn.functional as F


def lm_head_flops(d, V, positions=1):
    return 2.0 * d * V * positions
