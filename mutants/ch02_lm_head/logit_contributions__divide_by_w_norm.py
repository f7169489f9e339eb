EXERCISE = 'logit_contributions'
MISTAKE = 'divided by |w| only (the projection length)'
EXPECT = 'divided by |w| only'

import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    hd, wd = h.double(), w.double()
    n = float(wd.norm())
    return h * w, float(hd @ wd) / n if n else 0.0
