EXERCISE = 'kl_to_final'
MISTAKE = 'computed in float32: float64 lenses come back float32'
EXPECT = 'only the dtype differs'

import torch


def kl_to_final(lens):

    lens = lens.float()
    final = lens[-1]
    kl = (final.exp() * (final - lens)).sum(dim=-1)
    kl[-1] = 0.0
    return kl
