EXERCISE = 'lm_head_logits'
MISTAKE = 'kept only the last position'
EXPECT = 'last position'

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    logits = h[..., -1, :] @ W.T
    return logits if b is None else logits + b
