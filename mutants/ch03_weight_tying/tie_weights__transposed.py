EXERCISE = 'tie_weights'
MISTAKE = 'head.weight = nn.Parameter(embedding.weight.T): nn.Linear already stores [V, d]'
EXPECT = 'transposed'

import torch
from torch import nn


def tie_weights(embedding, head):
    head.weight = nn.Parameter(embedding.weight.T)
