EXERCISE = 'lm_head_flops'
MISTAKE = 'a numpy integer instead of a Python int'
EXPECT = None

import torch
import torch.nn.functional as F


import numpy as np


def lm_head_flops(d, V, positions=1):
    return np.int64(2) * d * V * positions
