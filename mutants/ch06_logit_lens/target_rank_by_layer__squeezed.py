EXERCISE = 'target_rank_by_layer'
MISTAKE = '.squeeze() "to tidy up" the count: a lens of one layer gives a 0-d rank instead of shape [1]'
EXPECT = 'your result lost its size-one dimensions'

import torch


def target_rank_by_layer(lens, target_id):
    return (lens > lens[:, target_id].unsqueeze(-1)).sum(dim=-1).squeeze()
