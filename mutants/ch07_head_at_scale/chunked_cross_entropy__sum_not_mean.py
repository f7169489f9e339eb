"""Returns the summed loss, not the mean over N."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = 'returns the summed loss, not the mean over N'
EXPECT = 'you returned the sum'

import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    total = 0
    for i in range(0, h.shape[0], chunk):
        total = total + F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk], reduction="sum")
    return total
