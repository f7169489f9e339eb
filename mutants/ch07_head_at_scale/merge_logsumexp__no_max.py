"""Log of the summed sums, with no max at all."""
EXERCISE = 'merge_logsumexp'
MISTAKE = 'log of the summed sums, with no max at all'
EXPECT = 'forgetting the max altogether'

import torch


def merge_logsumexp(local_max, local_sumexp):
    s = torch.where(torch.isneginf(local_max), 0.0, local_sumexp)
    return torch.log(s.sum(0))
