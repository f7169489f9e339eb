EXERCISE = 'kl_to_final'
MISTAKE = 'averaged over the vocabulary instead of summing'
EXPECT = 'averaged over the vocabulary'

import torch


def kl_to_final(lens):

    final = lens[-1]
    kl = (final.exp() * (final - lens)).mean(dim=-1)
    kl[-1] = 0.0
    return kl
