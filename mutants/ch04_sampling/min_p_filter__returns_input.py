EXERCISE = "min_p_filter"
MISTAKE = "min_p = 0 keeps everything, so the logits themselves are returned: the result is the caller's tensor"
EXPECT = "you returned the input tensor itself"

import torch


def min_p_filter(logits, min_p):
    if min_p == 0:
        return logits  # nothing to remove
    probs = softmax(logits)
    return logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
