EXERCISE = "top_k_filter"
MISTAKE = "k = 1 special-cased as the argmax: of several logits tied at the top only one is kept"
EXPECT = "ties at the k-th value"

import torch


def top_k_filter(logits, k):
    if k == 1:
        best = logits.argmax(dim=-1, keepdim=True)
        return torch.full_like(logits, float("-inf")).scatter(-1, best, logits.gather(-1, best))
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
