EXERCISE = 'row_byte_offset'
MISTAKE = 'counted elements, not bytes'
EXPECT = 'you counted elements, as if each were 1 byte'

import torch
import torch.nn.functional as F


def row_byte_offset(i, d, dtype):
    return i * d
