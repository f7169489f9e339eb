EXERCISE = "lm_head_logits"
MISTAKE = "the bias goes through torch.addmm, which only takes a 2-D h: one vector, or a batch [B, T, d], fails with a bias"
EXPECT = 'must be a matrix'
import torch


def lm_head_logits(h, W, b=None):
    if b is None:
        return h @ W.T
    return torch.addmm(b, h, W.T)
