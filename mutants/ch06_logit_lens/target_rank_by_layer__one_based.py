EXERCISE = 'target_rank_by_layer'
MISTAKE = 'ranks start at 1'
EXPECT = 'start at 1'

import torch


def target_rank_by_layer(lens, target_id):

    return (lens > lens[:, target_id:target_id + 1]).sum(dim=-1) + 1
