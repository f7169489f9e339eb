EXERCISE = 'top_k_tokens'
MISTAKE = 'removed the -inf (masked) entries before ranking: ids renumbered and too few values'
EXPECT = None

import torch
import torch.nn.functional as F


def top_k_tokens(logits, k):
    finite = logits[torch.isfinite(logits)]
    values, ids = torch.sort(finite, descending=True, stable=True)
    return values[:k], ids[:k]
