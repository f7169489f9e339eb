EXERCISE = 'min_p_filter'
MISTAKE = ('probabilities by exp(x) / sum without the max shift: huge logits give NaN and '
           'nothing is removed')
EXPECT = 'max shift'

import torch


def min_p_filter(logits, min_p):
    e = logits.exp()
    probs = e / e.sum(dim=-1, keepdim=True)
    return logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
