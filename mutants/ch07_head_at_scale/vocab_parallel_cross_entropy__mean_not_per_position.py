"""Returns the mean loss instead of one per position."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = 'returns the mean loss instead of one per position'
EXPECT = 'you returned the mean'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    M = torch.stack([x.amax(-1) for x in local_logits]).amax(0)
    lse = M + torch.log(sum(torch.exp(x - M[:, None]).sum(-1) for x in local_logits))
    target_logit = torch.zeros_like(lse)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
        target_logit = target_logit + torch.where(mine, picked, 0.0)
    return (lse - target_logit).mean()
