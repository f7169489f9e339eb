EXERCISE = 'target_rank_by_layer'
MISTAKE = 'ranks as floats ((...).float().sum())'
EXPECT = 'LongTensor'

import torch


def target_rank_by_layer(lens, target_id):

    return (lens > lens[:, target_id:target_id + 1]).float().sum(dim=-1)
