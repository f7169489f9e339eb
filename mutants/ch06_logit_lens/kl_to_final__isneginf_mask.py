EXERCISE = 'kl_to_final'
MISTAKE = "only the final row's -inf tokens dropped: a final probability that underflows to 0 against a layer's -inf gives NaN"
EXPECT = 'dropped only the tokens whose final log-probability is -inf'

import torch


def kl_to_final(lens):
    final = lens[-1]
    terms = torch.where(torch.isneginf(final), 0.0, final.exp() * (final - lens))
    kl = terms.sum(dim=-1)
    kl[-1] = 0.0
    return kl
