EXERCISE = 'top_p_filter'
MISTAKE = 'returned the filtered logits in sorted order'
EXPECT = 'sorted order'

import torch


def top_p_filter(logits, p):
    sorted_logits, order = logits.sort(dim=-1, descending=True)
    probs = softmax(sorted_logits)
    drop = probs.cumsum(dim=-1) - probs >= p
    drop[..., 0] = False
    return sorted_logits.masked_fill(drop, float("-inf"))
