EXERCISE = 'kl_to_final'
MISTAKE = 'weighted by the final log-probabilities'
EXPECT = 'LOG-probabilities'

import torch


def kl_to_final(lens):

    final = lens[-1]
    kl = (final * (final - lens)).sum(dim=-1)
    kl[-1] = 0.0
    return kl
