EXERCISE = "logit_contributions"
MISTAKE = "the norms are sqrt(sum of squares) in float32: for a tiny h the squares underflow to 0 and the cosine comes out 0.0"
EXPECT = 'underflow'
import torch


def logit_contributions(h, w):
    hn = h.float().pow(2).sum().sqrt()
    wn = w.float().pow(2).sum().sqrt()
    if hn == 0 or wn == 0:
        return h * w, 0.0
    return h * w, float((h.double() @ w.double()) / (hn.double() * wn.double()))
