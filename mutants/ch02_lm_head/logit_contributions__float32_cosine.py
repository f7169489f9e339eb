EXERCISE = "logit_contributions"
MISTAKE = "the cosine computed after .float(): bfloat16 and float32 vectors near float32's largest number overflow there"
EXPECT = "overflow or underflow there"
import torch


def logit_contributions(h, w):
    hf, wf = h.float(), w.float()
    n = hf.norm() * wf.norm()
    if n == 0:
        return h * w, 0.0
    return h * w, float(((hf @ wf) / n).clamp(-1, 1))
