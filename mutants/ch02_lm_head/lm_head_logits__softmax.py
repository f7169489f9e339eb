EXERCISE = 'lm_head_logits'
MISTAKE = 'returned probabilities (softmax) instead of logits'
EXPECT = 'softmax'

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    logits = h @ W.T
    return torch.softmax(logits if b is None else logits + b, dim=-1)
