EXERCISE = "vocab_parallel_cross_entropy"
MISTAKE = "each rank shifts by its OWN max and the sums are rescaled; a rank whose whole slice of a row is -inf gives exp(-inf - (-inf)) = NaN"
EXPECT = 'whole slice of a row is -inf'
import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    m = torch.stack([x.amax(dim=-1) for x in local_logits])  # [world, N]
    s = torch.stack([torch.exp(x - x.amax(dim=-1, keepdim=True)).sum(dim=-1) for x in local_logits])
    M = m.amax(0)
    lse = M + torch.log((s * torch.exp(m - M)).sum(0))
    target_logit = torch.zeros_like(M)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        if x.shape[-1]:
            picked = x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
            target_logit = target_logit + torch.where(mine, picked, torch.zeros_like(picked))
    return lse - target_logit
