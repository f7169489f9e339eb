"""Adds each rank's sum of exp(x - local max) without rescaling to the global max."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = "adds each rank's sum of exp(x - local max) without rescaling to the global max"
EXPECT = 'without rescaling each by exp(local_max - global_max)'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    m = torch.stack([x.amax(-1) for x in local_logits])
    s = torch.stack([torch.exp(x - x.amax(-1, keepdim=True)).sum(-1) for x in local_logits])
    s = torch.where(torch.isneginf(m), 0.0, s)
    lse = m.amax(0) + torch.log(s.sum(0))
    target_logit = torch.zeros_like(lse)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
        target_logit = target_logit + torch.where(mine, picked, 0.0)
    return lse - target_logit
