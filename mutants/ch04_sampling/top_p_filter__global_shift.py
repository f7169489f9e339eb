EXERCISE = 'top_p_filter'
MISTAKE = 'the probabilities shifted by the max of the whole batch: a row far below it underflows to 0/0'
EXPECT = 'max of the whole tensor'

import torch


def top_p_filter(logits, p):
    e = (logits - logits.max()).exp()
    probs = e / e.sum(dim=-1, keepdim=True)
    sorted_probs, order = probs.sort(dim=-1)
    drop = sorted_probs.cumsum(dim=-1) <= 1 - p
    drop[..., -1] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
