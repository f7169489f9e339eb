EXERCISE = "topk_logits_chunked"
MISTAKE = "the running best starts as a float32 tensor (torch.empty without dtype=), so half-precision inputs come back float32"
EXPECT = "only the dtype differs"
import torch


def topk_logits_chunked(h, W, k, chunk):
    N = h.shape[0]
    best_v = torch.empty(N, 0)  # float32, whatever h's dtype
    best_i = torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        v = torch.cat([best_v.to(torch.promote_types(best_v.dtype, logits.dtype)), logits.to(torch.promote_types(best_v.dtype, logits.dtype))], -1)
        i = torch.cat([best_i, ids], -1)
        by_id = torch.sort(i, dim=-1, stable=True).indices
        v, i = v.gather(-1, by_id), i.gather(-1, by_id)
        order = torch.sort(v, dim=-1, descending=True, stable=True).indices[:, :k]
        best_v, best_i = v.gather(-1, order), i.gather(-1, order)
    return best_v, best_i
