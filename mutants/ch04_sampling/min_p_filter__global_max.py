EXERCISE = 'min_p_filter'
MISTAKE = 'scaled min_p by the top probability of the whole tensor, not of each row'
EXPECT = 'each row'

import torch


def min_p_filter(logits, min_p):
    probs = softmax(logits)
    return logits.masked_fill(probs < min_p * probs.max(), float("-inf"))
