EXERCISE = "vocab_parallel_cross_entropy"
MISTAKE = "sums exp(x) over the ranks without subtracting the global max: exp overflows for logits of size ~500"
EXPECT = 'without the max shift'
import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    sum_exp = sum(torch.exp(x).sum(dim=-1) for x in local_logits)
    target_logit = torch.zeros(targets.shape[0], dtype=local_logits[0].dtype)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        if x.shape[-1]:
            picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
            target_logit = target_logit + torch.where(mine, picked, torch.zeros_like(picked))
    return torch.log(sum_exp) - target_logit
