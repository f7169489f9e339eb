EXERCISE = 'rows_with_gradient'
MISTAKE = 'counted non-zero entries'
EXPECT = 'non-zero entries'

import torch
from torch import nn


def rows_with_gradient(grad):
    return int((grad != 0).sum())
