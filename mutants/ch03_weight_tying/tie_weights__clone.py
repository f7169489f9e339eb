EXERCISE = 'tie_weights'
MISTAKE = 'head.weight = nn.Parameter(embedding.weight.clone()): a copy, not shared'
EXPECT = 'Copied instead of shared'

import torch
from torch import nn


def tie_weights(embedding, head):
    head.weight = nn.Parameter(embedding.weight.detach().clone())
