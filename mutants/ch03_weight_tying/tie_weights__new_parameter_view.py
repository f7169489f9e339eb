EXERCISE = 'tie_weights'
MISTAKE = 'head.weight = nn.Parameter(embedding.weight): same storage, a new Parameter'
EXPECT = 'different Parameter object'

import torch
from torch import nn


def tie_weights(embedding, head):
    head.weight = nn.Parameter(embedding.weight)
