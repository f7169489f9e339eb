EXERCISE = 'top_k_filter'
MISTAKE = 'the k largest of the whole tensor, not of each row'
EXPECT = 'per row'

import torch


def top_k_filter(logits, k):
    flat = logits.reshape(-1)
    k = min(k, flat.numel())
    kth = torch.topk(flat, k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))
