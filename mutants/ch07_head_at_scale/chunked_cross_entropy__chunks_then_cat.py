"""Computes the logits chunk by chunk, then puts them back together."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = 'computes the logits chunk by chunk, then puts them back together'
EXPECT = 'more than chunk'

import torch
import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    logits = torch.cat([h[i:i + chunk] @ W.T for i in range(0, h.shape[0], chunk)])
    return F.cross_entropy(logits, targets)
