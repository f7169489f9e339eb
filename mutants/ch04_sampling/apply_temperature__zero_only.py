EXERCISE = 'apply_temperature'
MISTAKE = 'raises only for temperature == 0; negative temperatures pass'
EXPECT = 'expected a ValueError'

import torch


def apply_temperature(logits, temperature):
    if temperature == 0:
        raise ValueError("temperature must not be 0")
    return logits / temperature
