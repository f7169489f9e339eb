EXERCISE = 'lm_head_logits'
MISTAKE = 'squeezed the result: a [1, d] input gives [V] instead of [1, V]'
EXPECT = 'lost its size-one dimensions'

import torch


def lm_head_logits(h, W, b=None):
    logits = h @ W.T
    if b is not None:
        logits = logits + b
    return logits.squeeze()  # "tidy up" the batch dimension
