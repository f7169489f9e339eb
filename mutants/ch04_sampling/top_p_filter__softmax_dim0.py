EXERCISE = 'top_p_filter'
MISTAKE = 'softmax over dim 0 (the batch) instead of the vocabulary'
EXPECT = 'wrong dimension'

import torch


def top_p_filter(logits, p):
    sorted_logits, order = logits.sort(dim=-1)
    probs = softmax(logits, dim=0).gather(-1, order)
    drop = probs.cumsum(dim=-1) <= 1 - p
    drop[..., -1] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
