EXERCISE = "apply_temperature"
MISTAKE = "T = 1 changes nothing, so the logits themselves are returned: the result is the caller's tensor"
EXPECT = "you returned the input tensor itself"

import torch


def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if temperature == 1:
        return logits
    return logits / temperature
