EXERCISE = 'logit_contributions'
MISTAKE = 'returned the angle in radians'
EXPECT = 'radians'

import torch
import torch.nn.functional as F


import math


def logit_contributions(h, w):
    return h * w, math.acos(float(F.cosine_similarity(h.double(), w.double(), dim=0)))
