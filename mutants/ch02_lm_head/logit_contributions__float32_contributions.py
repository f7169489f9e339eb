EXERCISE = 'logit_contributions'
MISTAKE = 'products in float32 (.float()): float64 inputs come back float32'
EXPECT = 'only the dtype differs'

import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    return h.float() * w.float(), float(F.cosine_similarity(h.double(), w.double(), dim=0))
