"""Adds the chunks' means."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = "adds the chunks' means"
EXPECT = "summed the chunks' means"

import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    return sum(F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk]) for i in range(0, h.shape[0], chunk))
