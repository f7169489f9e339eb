EXERCISE = 'kl_to_final'
MISTAKE = "torch.nan_to_num cleans 0 * log 0, and also turns the inf of a token a layer rules out into float32's largest number"
EXPECT = 'expected inf'

import torch


def kl_to_final(lens):
    final = lens[-1]
    kl = torch.nan_to_num(final.exp() * (final - lens)).sum(dim=-1)
    kl[-1] = 0.0
    return kl
