"""Looks the target up at the global index t in every shard that is wide enough."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = 'looks the target up at the global index t in every shard that is wide enough'
EXPECT = 'GLOBAL index t in every shard'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    M = torch.stack([x.amax(-1) for x in local_logits]).amax(0)
    lse = M + torch.log(sum(torch.exp(x - M[:, None]).sum(-1) for x in local_logits))
    target_logit = torch.zeros_like(lse)
    for x in local_logits:
        inside = targets < x.shape[-1]
        picked = x.gather(-1, targets.clamp(max=x.shape[-1] - 1)[:, None])[:, 0]
        target_logit = target_logit + torch.where(inside, picked, 0.0)
    return lse - target_logit
