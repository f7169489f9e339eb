EXERCISE = 'softmax'
MISTAKE = 'amax over a zero-size dim raises (torch.softmax returns an empty tensor)'
EXPECT = None

import torch


def softmax(logits, dim=-1):
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(logits.dtype)
