"""Returns after the first chunk (a return inside the loop)."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = 'returns after the first chunk (a return inside the loop)'
EXPECT = 'only the first chunk'

import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    for i in range(0, h.shape[0], chunk):
        return F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk])
