EXERCISE = 'kl_to_final'
MISTAKE = "F.kl_div(reduction='batchmean'): one number for all layers"
EXPECT = 'reduced over the layers'

import torch


def kl_to_final(lens):

    import torch.nn.functional as F
    return F.kl_div(lens, lens[-1].expand_as(lens), reduction="batchmean", log_target=True)
