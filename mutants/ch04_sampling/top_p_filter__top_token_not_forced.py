EXERCISE = 'top_p_filter'
MISTAKE = 'did not force-keep the top token: p = 0 removes everything'
EXPECT = 'no token left'

import torch


def top_p_filter(logits, p):
    sorted_logits, order = logits.sort(dim=-1)
    drop = softmax(sorted_logits).cumsum(dim=-1) <= 1 - p
    return logits.masked_fill(drop.scatter(-1, order, drop), float("-inf"))
