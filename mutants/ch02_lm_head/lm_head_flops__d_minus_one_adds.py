EXERCISE = 'lm_head_flops'
MISTAKE = 'd multiplications and d - 1 additions per logit'
EXPECT = 'd - 1'

import torch
import torch.nn.functional as F


def lm_head_flops(d, V, positions=1):
    return (2 * d - 1) * V * positions
