EXERCISE = "top_p_filter"
MISTAKE = "removes a token only when the ascending cumulative mass is < 1 - p (strict): a token exactly on the boundary stays"
EXPECT = "a token exactly on the boundary was kept"

import torch


def top_p_filter(logits, p):
    sorted_logits, order = logits.sort(dim=-1)
    drop_sorted = softmax(sorted_logits).cumsum(dim=-1) < 1 - p  # transformers uses <=
    drop_sorted[..., -1] = False
    return logits.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))
