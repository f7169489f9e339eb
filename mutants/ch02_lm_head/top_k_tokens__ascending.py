EXERCISE = 'top_k_tokens'
MISTAKE = 'sorted ascending: the k smallest'
EXPECT = 'SMALLEST'

import torch
import torch.nn.functional as F


def top_k_tokens(logits, k):
    values, ids = torch.sort(logits, stable=True)
    return values[:k], ids[:k]
