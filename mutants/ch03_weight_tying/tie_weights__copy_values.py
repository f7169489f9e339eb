EXERCISE = 'tie_weights'
MISTAKE = 'head.weight.data.copy_(embedding.weight.data): values copied once'
EXPECT = 'Copied instead of shared'

import torch
from torch import nn


def tie_weights(embedding, head):
    with torch.no_grad():
        head.weight.copy_(embedding.weight)
