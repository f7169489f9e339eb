EXERCISE = 'min_p_filter'
MISTAKE = 'compared logits with min_p * the largest logit'
EXPECT = 'compared logits'

import torch


def min_p_filter(logits, min_p):
    return logits.masked_fill(logits < min_p * logits.amax(dim=-1, keepdim=True), float("-inf"))
