EXERCISE = 'rows_with_gradient'
MISTAKE = 'returned a 0-d tensor, not a Python int'
EXPECT = 'int(...)'

import torch
from torch import nn


def rows_with_gradient(grad):
    return (grad != 0).any(dim=1).sum()
