EXERCISE = 'softmax'
MISTAKE = 'a final .squeeze() "to tidy the shape": a [1, V] batch comes back as [V]'
EXPECT = 'lost its size-one dimensions'

import torch


def softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits.clone()
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(logits.dtype).squeeze()
