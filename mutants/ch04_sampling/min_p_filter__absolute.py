EXERCISE = 'min_p_filter'
MISTAKE = 'compared the probabilities with min_p itself'
EXPECT = 'min_p itself'

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    top = probs == probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill((probs < min_p) & ~top, float("-inf"))
