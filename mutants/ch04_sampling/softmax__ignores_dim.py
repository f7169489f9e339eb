EXERCISE = 'softmax'
MISTAKE = 'always normalised along the last dimension, whatever dim says'
EXPECT = 'normalised along dim'

import torch


def softmax(logits, dim=-1):
    e = (logits - logits.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)
