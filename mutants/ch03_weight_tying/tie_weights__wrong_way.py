EXERCISE = 'tie_weights'
MISTAKE = 'embedding.weight = head.weight: tied the wrong way round'
EXPECT = 'wrong way round'

import torch
from torch import nn


def tie_weights(embedding, head):
    embedding.weight = head.weight
