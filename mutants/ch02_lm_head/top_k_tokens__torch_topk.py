EXERCISE = 'top_k_tokens'
MISTAKE = 'torch.topk: no promised order among tied values'
EXPECT = 'increasing id'

import torch
import torch.nn.functional as F


def top_k_tokens(logits, k):
    values, ids = torch.topk(logits, k, sorted=True)
    return values, ids
