EXERCISE = 'lm_head_logits'
MISTAKE = '`if b:` on a tensor bias (ambiguous truth value of a tensor)'
EXPECT = None

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    logits = h @ W.T
    if b:
        logits = logits + b
    return logits
