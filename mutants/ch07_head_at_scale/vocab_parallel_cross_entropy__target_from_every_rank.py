EXERCISE = "vocab_parallel_cross_entropy"
MISTAKE = "every rank adds x[i, clamp(t - start)] (no ownership mask): the target logit is summed over all ranks"
EXPECT = "target logit from every rank"
import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    global_max = torch.stack([x.amax(dim=-1) for x in local_logits]).amax(dim=0)
    safe_max = torch.where(torch.isinf(global_max), torch.zeros_like(global_max), global_max)
    sum_exp = sum(torch.exp(x - safe_max[:, None]).sum(dim=-1) for x in local_logits)
    target_logit = torch.zeros_like(global_max)
    for x, start in zip(local_logits, starts):
        if x.shape[-1]:
            target_logit = target_logit + x.gather(-1, (targets - start).clamp(0, x.shape[-1] - 1)[:, None])[:, 0]
    return safe_max + torch.log(sum_exp) - target_logit
