"""Finds the target's rank as t // (V // world), as if the shards were even."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = "finds the target's rank as t // (V // world), as if the shards were even"
EXPECT = 'from the wrong shard'

import torch


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    M = torch.stack([x.amax(-1) for x in local_logits]).amax(0)
    lse = M + torch.log(sum(torch.exp(x - M[:, None]).sum(-1) for x in local_logits))
    world, V = len(local_logits), sum(x.shape[-1] for x in local_logits)
    picked = []
    for i, t in enumerate(targets.tolist()):
        r = min(t // (V // world), world - 1)
        x = local_logits[r]
        picked.append(x[i, min(max(t - starts[r], 0), x.shape[-1] - 1)])
    return lse - torch.stack(picked)
