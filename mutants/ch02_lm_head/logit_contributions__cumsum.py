EXERCISE = 'logit_contributions'
MISTAKE = 'cumulative sum of the products'
EXPECT = 'cumulative'

import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    return torch.cumsum(h * w, 0), float(F.cosine_similarity(h.double(), w.double(), dim=0))
