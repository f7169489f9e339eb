EXERCISE = 'merge_logsumexp'
MISTAKE = 'a -inf local max replaced by 0 "to avoid -inf - (-inf)" before the global max: when every finite rank lies far below 0, the shift is 0 and their sums underflow'
EXPECT = 'you replaced a -inf local max by 0'

import torch


def merge_logsumexp(local_max, local_sumexp):
    empty = torch.isneginf(local_max)
    m = torch.where(empty, torch.zeros_like(local_max), local_max)
    s = torch.where(empty, torch.zeros_like(local_sumexp), local_sumexp)
    M = m.amax(0)
    return M + torch.log((s * torch.exp(m - M)).sum(0))
