"""Owner test local <= V_r: a target at a shard boundary is also taken (clamped) from the rank before its owner."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = 'owner test one past the slice (local <= V_r)'
EXPECT = 'one past a rank'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    owners = [x for x in local_logits if x.shape[-1]]
    global_max = torch.stack([x.amax(dim=-1) for x in owners]).amax(dim=0)
    safe_max = torch.where(torch.isfinite(global_max), global_max, torch.zeros_like(global_max))
    sum_exp = sum(torch.exp(x - safe_max[:, None]).sum(dim=-1) for x in owners)
    target_logit = torch.zeros_like(safe_max)
    for x, start in zip(local_logits, starts):
        if not x.shape[-1]:
            continue
        local = targets - start
        mine = (local >= 0) & (local <= x.shape[-1])
        picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
        target_logit = target_logit + torch.where(mine, picked, torch.zeros_like(picked))
    return safe_max + torch.log(sum_exp) - target_logit
