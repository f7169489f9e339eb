EXERCISE = 'top_k_filter'
MISTAKE = 'removed logits <= the k-th value: keeps k - 1'
EXPECT = 'off-by-one'

import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits <= kth, float("-inf")) if k < logits.shape[-1] else logits
