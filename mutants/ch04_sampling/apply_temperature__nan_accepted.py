EXERCISE = 'apply_temperature'
MISTAKE = '`if temperature <= 0: raise` lets NaN through (NaN <= 0 is False)'
EXPECT = 'NaN'

import torch


def apply_temperature(logits, temperature):
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    return logits / temperature
