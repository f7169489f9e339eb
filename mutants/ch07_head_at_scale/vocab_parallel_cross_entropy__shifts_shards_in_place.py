EXERCISE = "vocab_parallel_cross_entropy"
MISTAKE = "subtracts the global max from each rank's logits in place (x.sub_), changing the caller's list of shards"
EXPECT = "changed `local_logits[0]` in place"
import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    global_max = torch.stack([x.amax(dim=-1) for x in local_logits]).amax(dim=0)
    safe_max = torch.where(torch.isinf(global_max), torch.zeros_like(global_max), global_max)
    for x in local_logits:
        x.sub_(safe_max[:, None])  # every rank's slice now holds x - M: the caller's tensors change
    sum_exp = sum(torch.exp(x).sum(dim=-1) for x in local_logits)
    target_logit = torch.zeros_like(global_max)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        if x.shape[-1]:
            picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
            target_logit = target_logit + torch.where(mine, picked, torch.zeros_like(picked))
    return torch.log(sum_exp) - target_logit
