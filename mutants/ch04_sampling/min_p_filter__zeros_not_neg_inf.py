EXERCISE = 'min_p_filter'
MISTAKE = 'removed logits set to 0 instead of -inf'
EXPECT = '-inf, not 0'

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    return logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), 0.0)
