EXERCISE = 'merge_logsumexp'
MISTAKE = 'merges in float32 "for speed" and returns it: float64 inputs come back as float32'
EXPECT = 'your result is float32 when the input is float64'

import torch


def merge_logsumexp(local_max, local_sumexp):
    m, s = local_max.float(), local_sumexp.float()
    M = m.amax(0)
    safe = torch.where(torch.isinf(M), torch.zeros_like(M), M)
    scaled = torch.where(torch.isneginf(m), torch.zeros_like(s), s * torch.exp(m - safe))
    return torch.where(torch.isneginf(M), M, safe + torch.log(scaled.sum(0)))
