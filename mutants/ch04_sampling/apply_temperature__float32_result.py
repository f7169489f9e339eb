EXERCISE = 'apply_temperature'
MISTAKE = 'logits.float() / T: float64 logits come back float32'
EXPECT = 'only the dtype differs'

import torch


def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    return logits.float() / temperature
