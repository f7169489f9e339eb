EXERCISE = 'count_parameters'
MISTAKE = 'counted only parameters with requires_grad=True'
EXPECT = 'trainable'

import torch
from torch import nn


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
