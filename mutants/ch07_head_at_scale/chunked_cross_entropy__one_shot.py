"""No chunks at all: the whole [N, V] logits at once."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = 'no chunks at all: the whole [N, V] logits at once'
EXPECT = 'more than chunk'

import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    return F.cross_entropy(h @ W.T, targets)
