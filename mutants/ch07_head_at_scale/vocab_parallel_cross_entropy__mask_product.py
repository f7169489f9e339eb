EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = "the non-owners' target logit zeroed by multiplying with the ownership mask: a clamped -inf times 0 is NaN"
EXPECT = 'multiplying with the ownership mask'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    owned = [x for x in local_logits if x.shape[-1]]
    big = torch.stack([x.amax(dim=-1) for x in owned]).amax(dim=0)
    shift = torch.where(torch.isinf(big), torch.zeros_like(big), big)
    sumexp = sum(torch.exp(x - shift[:, None]).sum(dim=-1) for x in owned)
    target = torch.zeros_like(big)
    for x, start in zip(local_logits, starts):
        if x.shape[-1]:
            local = targets - start
            mine = ((local >= 0) & (local < x.shape[-1])).to(x.dtype)
            target = target + x.gather(-1, local.clamp(0, x.shape[-1] - 1)[:, None])[:, 0] * mine
    return shift + torch.log(sumexp) - target
