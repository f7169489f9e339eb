"""Log(sum_r s_r * exp(m_r)) without factoring out the global max."""
EXERCISE = 'merge_logsumexp'
MISTAKE = 'log(sum_r s_r * exp(m_r)) without factoring out the global max'
EXPECT = 'Factor out the global max'

import torch


def merge_logsumexp(local_max, local_sumexp):
    s = torch.where(torch.isneginf(local_max), 0.0, local_sumexp)
    return torch.log((s * torch.exp(local_max)).sum(0))
