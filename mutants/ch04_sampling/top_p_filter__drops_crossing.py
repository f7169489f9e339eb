EXERCISE = 'top_p_filter'
MISTAKE = 'dropped the token that takes the kept mass past p'
EXPECT = 'crossing'

import torch


def top_p_filter(logits, p):
    probs, order = softmax(logits).sort(dim=-1, descending=True)
    drop = probs.cumsum(dim=-1) > p
    drop[..., 0] = False
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
