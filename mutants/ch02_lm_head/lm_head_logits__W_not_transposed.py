EXERCISE = 'lm_head_logits'
MISTAKE = 'h @ W instead of h @ W.T'
EXPECT = 'instead of W.T'

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    logits = h @ W
    return logits if b is None else logits + b
