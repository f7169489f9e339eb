EXERCISE = 'row_byte_offset'
MISTAKE = "the element size read from the digits of the dtype's name (float8_e4m3fn -> 843 bits)"
EXPECT = "digits of the dtype's name"

import torch


def row_byte_offset(i, d, dtype):
    bits = int("".join(c for c in str(dtype) if c.isdigit()))  # 'torch.bfloat16' -> 16, 'torch.int8' -> 8
    return i * d * (bits // 8)
