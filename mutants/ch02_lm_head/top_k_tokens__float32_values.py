EXERCISE = 'top_k_tokens'
MISTAKE = 'sorted a float32 copy of the logits: float64 logits lose their precision'
EXPECT = 'float32 precision'

import torch


def top_k_tokens(logits, k):
    values, ids = torch.sort(logits.float(), descending=True, stable=True)  # .float(): "so bfloat16 sorts too"
    return values[:k].to(logits.dtype), ids[:k]
