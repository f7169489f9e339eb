"""The right formula, unguarded: an all -inf shard (or row) gives NaN."""
EXERCISE = 'merge_logsumexp'
MISTAKE = 'the right formula, unguarded: an all -inf shard (or row) gives NaN'
EXPECT = 'exp(-inf - (-inf)) is NaN'

import torch


def merge_logsumexp(local_max, local_sumexp):
    M = local_max.amax(0)
    return M + torch.log((local_sumexp * torch.exp(local_max - M)).sum(0))
