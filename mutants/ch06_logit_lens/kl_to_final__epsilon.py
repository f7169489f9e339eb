EXERCISE = 'kl_to_final'
MISTAKE = 'probabilities with an epsilon "against log(0)": log(p + 1e-10) changes small terms and makes an infinite KL finite'
EXPECT = 'you added a small epsilon to the probabilities'

import torch


def kl_to_final(lens):
    P, Q = lens[-1].exp(), lens.exp()
    kl = (P * (torch.log(P + 1e-10) - torch.log(Q + 1e-10))).sum(dim=-1)
    kl[-1] = 0.0
    return kl
