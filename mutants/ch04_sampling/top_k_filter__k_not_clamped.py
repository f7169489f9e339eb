EXERCISE = 'top_k_filter'
MISTAKE = 'k > V not clamped: torch.topk raises'
EXPECT = None

import torch


def top_k_filter(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
