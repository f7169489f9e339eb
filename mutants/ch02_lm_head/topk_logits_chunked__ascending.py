"""each merge keeps the k smallest logits (an ascending sort)."""
EXERCISE = 'topk_logits_chunked'
MISTAKE = 'each merge keeps the k smallest logits (an ascending sort)'
EXPECT = 'ascending order'

import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v, best_i = h.new_empty(N, 0), torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        v, i = torch.cat([best_v, logits], -1), torch.cat([best_i, ids], -1)
        order = torch.sort(v, dim=-1, stable=True).indices[:, :k]
        best_v, best_i = v.gather(-1, order), i.gather(-1, order)
    return best_v, best_i
