EXERCISE = 'apply_temperature'
MISTAKE = 'returned softmax(logits / T) instead of the scaled logits'
EXPECT = 'returned probabilities'

import torch


def apply_temperature(logits, temperature):
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    return torch.softmax(logits / temperature, dim=-1)
