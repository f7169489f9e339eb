EXERCISE = 'row_byte_offset'
MISTAKE = 'counted rows from 1'
EXPECT = 'counted rows from 1'

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return (i + 1) * d * torch.empty(0, dtype=dtype).element_size()
