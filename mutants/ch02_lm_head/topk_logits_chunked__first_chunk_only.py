"""the loop returns after the first chunk."""
EXERCISE = 'topk_logits_chunked'
MISTAKE = 'the loop returns after the first chunk'
EXPECT = 'only the first chunk'

import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    logits = h @ W[:chunk].T
    ids = torch.arange(logits.shape[1]).expand(N, -1)
    return _best_k(logits, ids, k)
