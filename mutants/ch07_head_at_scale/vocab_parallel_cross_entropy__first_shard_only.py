"""Takes every target logit from rank 0's slice."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = "takes every target logit from rank 0's slice"
EXPECT = 'first shard only'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    M = torch.stack([x.amax(-1) for x in local_logits]).amax(0)
    lse = M + torch.log(sum(torch.exp(x - M[:, None]).sum(-1) for x in local_logits))
    first = local_logits[0]
    return lse - first.gather(-1, targets.clamp(max=first.shape[-1] - 1)[:, None])[:, 0]
