EXERCISE = 'softmax'
MISTAKE = 'exp(x) / sum without subtracting the max: overflow gives inf / inf = NaN'
EXPECT = 'without the max shift'

import torch


def softmax(logits, dim=-1):
    e = logits.exp()
    return e / e.sum(dim=dim, keepdim=True)
