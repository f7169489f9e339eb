EXERCISE = 'row_byte_offset'
MISTAKE = 'a float result (true division somewhere)'
EXPECT = 'returned a float'

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return i * d * torch.empty(0, dtype=dtype).element_size() / 1
