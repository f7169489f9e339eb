EXERCISE = 'apply_temperature'
MISTAKE = 'multiplied by the temperature'
EXPECT = 'multiplied by the temperature'

import torch


def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    return logits * temperature
