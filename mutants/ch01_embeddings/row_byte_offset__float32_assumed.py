EXERCISE = 'row_byte_offset'
MISTAKE = 'assumed 4 bytes per element whatever the dtype'
EXPECT = '4 bytes'

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return i * d * 4
