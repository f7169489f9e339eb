EXERCISE = "top_p_filter"
MISTAKE = "p >= 1 keeps everything, so the logits themselves are returned: the result is the caller's tensor"
EXPECT = "you returned the input tensor itself"

import torch


def top_p_filter(logits, p):
    if p >= 1:
        return logits  # nothing to remove
    sorted_logits, order = logits.sort(dim=-1)
    drop_sorted = softmax(sorted_logits).cumsum(dim=-1) <= 1 - p
    drop_sorted[..., -1] = False
    return logits.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))
