EXERCISE = 'row_byte_offset'
MISTAKE = 'used the column stride (element size) only'
EXPECT = 'column stride'

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return i * torch.empty(0, dtype=dtype).element_size()
