EXERCISE = 'count_parameters'
MISTAKE = 'named_parameters(remove_duplicate=False): a shared Parameter counted per name'
EXPECT = 'counted every name'

import torch
from torch import nn


def count_parameters(model):
    return sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
