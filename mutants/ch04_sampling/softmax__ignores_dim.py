EXERCISE = 'softmax'
MISTAKE = 'always normalised along the last dimension, whatever dim says'
EXPECT = 'normalised along dim'
import torch


def softmax(logits, dim=-1):
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits  # float32 for halves, as it should
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return (e / e.sum(dim=-1, keepdim=True)).to(logits.dtype)
