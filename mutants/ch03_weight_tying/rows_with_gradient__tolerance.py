EXERCISE = 'rows_with_gradient'
MISTAKE = 'a tolerance of 1e-6'
EXPECT = 'used a tolerance'

import torch
from torch import nn


def rows_with_gradient(grad):
    return int((grad.abs() > 1e-6).any(dim=1).sum())
