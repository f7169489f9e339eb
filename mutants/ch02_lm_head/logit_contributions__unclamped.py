EXERCISE = "logit_contributions"
MISTAKE = "the cosine is not clamped: for h == w float32 rounding gives 1.0000001"
EXPECT = "lies outside [-1, 1]"
import torch


def logit_contributions(h, w):
    a, b = (h.double(), w.double()) if h.dtype in (torch.float16, torch.bfloat16) else (h, w)
    n = a.norm() * b.norm()
    return h * w, 0.0 if n == 0 else float((a * b).sum() / n)
