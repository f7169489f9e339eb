EXERCISE = 'rows_with_gradient'
MISTAKE = 'counted rows whose entries are all non-zero'
EXPECT = 'ALL non-zero'

import torch
from torch import nn


def rows_with_gradient(grad):
    return int((grad != 0).all(dim=1).sum())
