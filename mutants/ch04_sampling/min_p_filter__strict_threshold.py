EXERCISE = 'min_p_filter'
MISTAKE = 'removed probabilities <= the threshold: a probability equal to min_p * p_max goes, and min_p = 1 removes even the top token'
EXPECT = 'exactly equal to min_p * p_max was removed'

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    return logits.masked_fill(probs <= min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
