EXERCISE = 'top_k_filter'
MISTAKE = 'removed logits set to 0 instead of -inf'
EXPECT = '-inf, not 0'

import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, 0.0)
