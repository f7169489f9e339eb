EXERCISE = "logit_contributions"
MISTAKE = "the cosine computed in float16/bfloat16 itself: its products and norms overflow for large values"
EXPECT = "overflow or underflow there"
import torch


def logit_contributions(h, w):
    n = h.norm() * w.norm()
    if n == 0:
        return h * w, 0.0
    return h * w, float(((h * w).sum() / n).clamp(-1, 1))
