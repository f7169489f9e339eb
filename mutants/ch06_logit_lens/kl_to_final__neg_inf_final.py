EXERCISE = 'kl_to_final'
MISTAKE = 'the KL sum written as is: where the final row rules a token out (-inf), 0 * (-inf) is NaN instead of 0'
EXPECT = 'the final distribution rules a token out'

import torch


def kl_to_final(lens):
    final = lens[-1]
    kl = (final.exp() * (final - lens)).sum(dim=-1)
    kl[-1] = 0.0
    return kl
