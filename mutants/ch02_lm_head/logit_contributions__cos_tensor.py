EXERCISE = "logit_contributions"
MISTAKE = "returns the cosine as a 0-d tensor (F.cosine_similarity's result), not a Python float"
EXPECT = 'a Python float'
import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    return h * w, F.cosine_similarity(h.double(), w.double(), dim=0)
