EXERCISE = 'lookup'
MISTAKE = 'converted the table to float32 (E.float()) before indexing'
EXPECT = 'only the dtype differs'

import torch
import torch.nn.functional as F


def lookup(E, ids):
    return E.float()[ids]
