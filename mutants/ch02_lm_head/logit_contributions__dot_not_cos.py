EXERCISE = 'logit_contributions'
MISTAKE = 'returned the dot product as the cosine'
EXPECT = 'dot product'

import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    return h * w, float((h.double() * w.double()).sum())
