EXERCISE = 'count_parameters'
MISTAKE = 'deduplicated by data_ptr() (0 on the meta device)'
EXPECT = 'deduplicated by data_ptr()'

import torch
from torch import nn


def count_parameters(model):
    return sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values())
