EXERCISE = 'untied_total'
MISTAKE = 'gave the untied head a bias of V as well'
EXPECT = 'bias'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return total_params + vocab_size * d_model + vocab_size
