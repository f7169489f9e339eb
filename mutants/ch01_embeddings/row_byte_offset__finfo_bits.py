EXERCISE = 'row_byte_offset'
MISTAKE = 'torch.finfo(dtype).bits // 8: finfo refuses integer dtypes'
EXPECT = None

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return i * d * (torch.finfo(dtype).bits // 8)
