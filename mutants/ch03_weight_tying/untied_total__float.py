EXERCISE = 'untied_total'
MISTAKE = 'a float result (a float factor somewhere)'
EXPECT = 'returned a float'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return total_params + 1.0 * vocab_size * d_model
