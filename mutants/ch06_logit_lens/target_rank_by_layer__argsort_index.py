EXERCISE = 'target_rank_by_layer'
MISTAKE = 'argsort(...)[:, target_id]: the token at rank target_id'
EXPECT = 'argsort'

import torch


def target_rank_by_layer(lens, target_id):
    order = torch.argsort(lens, dim=-1, descending=True, stable=True)
    return order[torch.arange(order.shape[0]), target_id]
