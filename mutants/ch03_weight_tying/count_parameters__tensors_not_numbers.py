EXERCISE = 'count_parameters'
MISTAKE = 'counted Parameter tensors, not the numbers in them'
EXPECT = 'numel'

import torch
from torch import nn


def count_parameters(model):
    return len(list(model.parameters()))
