EXERCISE = 'count_parameters'
MISTAKE = 'summed state_dict() entries (tied names twice, buffers too)'
EXPECT = 'state_dict()'

import torch
from torch import nn


def count_parameters(model):
    return sum(v.numel() for v in model.state_dict().values())
