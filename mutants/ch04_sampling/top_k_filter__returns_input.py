EXERCISE = 'top_k_filter'
MISTAKE = 'k >= V "keeps everything", so the logits themselves are returned: the result is the caller\'s tensor'
EXPECT = 'you returned the input tensor itself'

import torch


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits  # nothing to remove
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
