EXERCISE = 'apply_temperature'
MISTAKE = 'assert temperature > 0 (AssertionError, not ValueError)'
EXPECT = None

import torch


def apply_temperature(logits, temperature):
    assert temperature > 0, "temperature must be > 0"
    return logits / temperature
