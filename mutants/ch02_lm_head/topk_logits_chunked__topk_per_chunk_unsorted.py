"""torch.topk per chunk, then the candidates merged with torch.topk (ties in any order)."""
EXERCISE = 'topk_logits_chunked'
MISTAKE = 'torch.topk per chunk, then the candidates merged with torch.topk (ties in any order)'
EXPECT = 'LOWER id'

import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v, best_i = h.new_empty(N, 0), torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T
        top = torch.topk(logits, min(k, logits.shape[1]), dim=-1)
        v, i = torch.cat([top.values, best_v], -1), torch.cat([top.indices + start, best_i], -1)
        t = torch.topk(v, min(k, v.shape[1]), dim=-1)
        best_v, best_i = t.values, i.gather(-1, t.indices)
    return best_v, best_i
