EXERCISE = 'logit_contributions'
MISTAKE = 'no guard for a zero vector: 0 / 0 = NaN'
EXPECT = 'NaN'

import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    dot = (h.double() * w.double()).sum()
    return h * w, float(dot / (h.double().norm() * w.double().norm()))
