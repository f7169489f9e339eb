EXERCISE = 'softmax'
MISTAKE = 'computed half-precision logits in float32 and returned float32'
EXPECT = 'only the dtype differs'

import torch


def softmax(logits, dim=-1):
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    if x.numel() == 0:
        return x.clone()
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True)
