EXERCISE = 'lm_head_logits'
MISTAKE = 'computed in float32 (.float()): float64 inputs come back float32'
EXPECT = 'only the dtype differs'

import torch
import torch.nn.functional as F


def lm_head_logits(h, W, b=None):
    logits = h.float() @ W.float().T
    return logits if b is None else logits + b.float()
