EXERCISE = 'rows_with_gradient'
MISTAKE = "tested each row's sum"
EXPECT = 'summed each row'

import torch
from torch import nn


def rows_with_gradient(grad):
    return int((grad.sum(dim=1) != 0).sum())
