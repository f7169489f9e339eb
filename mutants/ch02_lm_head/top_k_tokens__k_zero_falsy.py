EXERCISE = 'top_k_tokens'
MISTAKE = '`k = k or len(logits)`: k = 0 is falsy and returns everything'
EXPECT = 'k = 0'

import torch
import torch.nn.functional as F


def top_k_tokens(logits, k):
    k = k or logits.shape[0]
    values, ids = torch.sort(logits, descending=True, stable=True)
    return values[:k], ids[:k]
