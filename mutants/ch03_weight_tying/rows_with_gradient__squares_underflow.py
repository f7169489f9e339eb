EXERCISE = 'rows_with_gradient'
MISTAKE = 'tested the sum of squares (> 0): tiny entries square to 0'
EXPECT = 'underflow'

import torch
from torch import nn


def rows_with_gradient(grad):
    return int(((grad ** 2).sum(dim=1) > 0).sum())
