EXERCISE = 'kl_to_final'
MISTAKE = 'KL(layer || final), the other direction'
EXPECT = 'other direction'

import torch


def kl_to_final(lens):

    kl = (lens.exp() * (lens - lens[-1])).sum(dim=-1)
    kl[-1] = 0.0
    return kl
