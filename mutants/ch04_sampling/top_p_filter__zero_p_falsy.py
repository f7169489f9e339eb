EXERCISE = 'top_p_filter'
MISTAKE = '`if not p: return logits`: p = 0.0 treated as no filter'
EXPECT = 'p = 0'

import torch


def top_p_filter(logits, p):
    if not p:
        return logits
    sorted_logits, order = logits.sort(dim=-1)
    drop = softmax(sorted_logits).cumsum(dim=-1) <= 1 - p
    drop[..., -1] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
