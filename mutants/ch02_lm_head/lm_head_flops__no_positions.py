EXERCISE = 'lm_head_flops'
MISTAKE = 'left out the positions'
EXPECT = 'left out the positions'

import torch
import torch.nn.functional as F


def lm_head_flops(d, V, positions=1):
    return 2 * d * V
