EXERCISE = 'tie_weights'
MISTAKE = 'head.weight.data = embedding.weight.data: shared memory, two Parameter objects'
EXPECT = 'different Parameter object'

import torch
from torch import nn


def tie_weights(embedding, head):
    head.weight.data = embedding.weight.data
