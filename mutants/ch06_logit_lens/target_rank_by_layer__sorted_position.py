EXERCISE = 'target_rank_by_layer'
MISTAKE = 'position in a stable descending sort: tied tokens do not share the better rank'
EXPECT = 'ties'

import torch


def target_rank_by_layer(lens, target_id):

    order = torch.argsort(lens, dim=-1, descending=True, stable=True)
    return (order == target_id).nonzero()[:, 1]
