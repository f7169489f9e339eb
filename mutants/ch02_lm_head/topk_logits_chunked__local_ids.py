"""ids counted from the start of each chunk (the chunk offset forgotten)."""
EXERCISE = 'topk_logits_chunked'
MISTAKE = 'ids counted from the start of each chunk (the chunk offset forgotten)'
EXPECT = 'local to their chunk'

import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v, best_i = h.new_empty(N, 0), torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T
        ids = torch.arange(logits.shape[1]).expand(N, -1)
        best_v, best_i = _best_k(torch.cat([best_v, logits], -1), torch.cat([best_i, ids], -1), k)
    return best_v, best_i
