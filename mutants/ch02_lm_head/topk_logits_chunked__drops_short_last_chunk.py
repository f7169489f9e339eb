EXERCISE = "topk_logits_chunked"
MISTAKE = "loops over V // chunk full chunks only: the short last chunk (V % chunk rows) is never scored"
EXPECT = "last, shorter chunk"
import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v = h.new_empty(N, 0)
    best_i = torch.empty(N, 0, dtype=torch.long)
    for c in range(max(W.shape[0] // chunk, 1)):
        start = c * chunk
        logits = h @ W[start:start + chunk].T
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        v, i = torch.cat([best_v, logits], -1), torch.cat([best_i, ids], -1)
        by_id = torch.sort(i, dim=-1, stable=True).indices
        v, i = v.gather(-1, by_id), i.gather(-1, by_id)
        order = torch.sort(v, dim=-1, descending=True, stable=True).indices[:, :k]
        best_v, best_i = v.gather(-1, order), i.gather(-1, order)
    return best_v, best_i
