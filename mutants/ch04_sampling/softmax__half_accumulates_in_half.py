EXERCISE = 'softmax'
MISTAKE = ('float16/bfloat16 computed in their own precision (shift, exp and division rounded to '
           'half)')
EXPECT = 'float32'

import torch


def softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    e = (logits - logits.amax(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True)
