"""candidates merged as [new chunk, best so far], so a tie goes to the later (higher) id."""
EXERCISE = 'topk_logits_chunked'
MISTAKE = 'candidates merged as [new chunk, best so far], so a tie goes to the later (higher) id'
EXPECT = 'LOWER id'

import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v, best_i = h.new_empty(N, 0), torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        v, i = torch.cat([logits.flip(-1), best_v], -1), torch.cat([ids.flip(-1), best_i], -1)
        order = torch.sort(v, dim=-1, descending=True, stable=True).indices[:, :k]
        best_v, best_i = v.gather(-1, order), i.gather(-1, order)
    return best_v, best_i
