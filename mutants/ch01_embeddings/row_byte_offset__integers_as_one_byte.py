EXERCISE = 'row_byte_offset'
MISTAKE = 'element size right for floating dtypes, 1 byte assumed for every integer dtype'
EXPECT = 'you counted elements, as if each were 1 byte'

import torch


def row_byte_offset(i, d, dtype):
    size = torch.finfo(dtype).bits // 8 if dtype.is_floating_point else 1
    return i * d * size
