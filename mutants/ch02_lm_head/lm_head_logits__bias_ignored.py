EXERCISE = 'lm_head_logits'
MISTAKE = 'left out the bias'
EXPECT = 'left out the bias'

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    return h @ W.T
