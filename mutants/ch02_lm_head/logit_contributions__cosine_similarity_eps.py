EXERCISE = "logit_contributions"
MISTAKE = "F.cosine_similarity's epsilon: the cosine of tiny vectors (norms below 1e-8) comes out near 0"
EXPECT = "eps = 1e-8"
import torch
import torch.nn.functional as F


def logit_contributions(h, w):
    if h.norm() == 0 or w.norm() == 0:
        return h * w, 0.0
    return h * w, float(F.cosine_similarity(h.double(), w.double(), dim=0).clamp(-1, 1))
