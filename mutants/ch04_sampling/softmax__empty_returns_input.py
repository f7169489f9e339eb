EXERCISE = "softmax"
MISTAKE = "an empty input is returned as it is: the result is the caller's tensor, not a new one"
EXPECT = "you returned the input tensor itself"

import torch


def softmax(logits, dim=-1):
    if logits.numel() == 0:
        return logits  # nothing to normalise
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return (e / e.sum(dim=dim, keepdim=True)).to(logits.dtype)
