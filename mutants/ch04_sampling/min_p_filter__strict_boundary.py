EXERCISE = "min_p_filter"
MISTAKE = "removes probabilities <= min_p * p_max (the top token protected): a probability exactly at the threshold goes"
EXPECT = "exactly equal to min_p * p_max was removed"

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    top = probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill((probs <= min_p * top) & (probs < top), float("-inf"))
