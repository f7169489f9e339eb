EXERCISE = 'top_k_filter'
MISTAKE = 'kept exactly k tokens (scatter of topk): ties at the k-th value dropped'
EXPECT = 'ties at the k-th value'

import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    top = torch.topk(logits, k, dim=-1)
    return torch.full_like(logits, float("-inf")).scatter(-1, top.indices, top.values)
