EXERCISE = 'softmax'
MISTAKE = 'an epsilon added to the sum "to be safe" (the sum after the max shift is at least 1)'
EXPECT = 'you added a small epsilon'

import torch


def softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return (e / (e.sum(dim=dim, keepdim=True) + 1e-8)).to(logits.dtype)
