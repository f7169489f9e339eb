EXERCISE = 'top_p_filter'
MISTAKE = 'softmax over dim 0 (the batch) instead of the vocabulary'
EXPECT = 'wrong dimension'

import torch


def top_p_filter(logits, p):
    probs = softmax(logits, dim=0)
    sorted_probs, order = probs.sort(dim=-1)
    drop = sorted_probs.cumsum(dim=-1) <= 1 - p
    drop[..., -1] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
