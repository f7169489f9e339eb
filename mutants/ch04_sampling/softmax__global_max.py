EXERCISE = 'softmax'
MISTAKE = 'subtracted the max of the whole tensor instead of the max along dim'
EXPECT = 'max of the whole tensor'

import torch


def softmax(logits, dim=-1):
    e = (logits - logits.max()).exp()
    return e / e.sum(dim=dim, keepdim=True)
