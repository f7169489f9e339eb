EXERCISE = 'kl_to_final'
MISTAKE = 'F.kl_div with log-probabilities as target but without log_target=True'
EXPECT = 'log_target'

import torch


def kl_to_final(lens):

    import torch.nn.functional as F
    return F.kl_div(lens, lens[-1].expand_as(lens), reduction="none").sum(dim=-1)
