EXERCISE = 'target_rank_by_layer'
MISTAKE = 'counted smaller values'
EXPECT = 'from the bottom'

import torch


def target_rank_by_layer(lens, target_id):

    return (lens < lens[:, target_id:target_id + 1]).sum(dim=-1)
