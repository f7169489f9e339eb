EXERCISE = 'top_k_filter'
MISTAKE = 'topk along dim=0 instead of the vocabulary (last) dimension'
EXPECT = None

import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[0])
    kth = torch.topk(logits, k, dim=0).values[-1:]
    return logits.masked_fill(logits < kth, float("-inf"))
