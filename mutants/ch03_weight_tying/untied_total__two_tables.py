EXERCISE = 'untied_total'
MISTAKE = 'added two tables'
EXPECT = 'added two tables'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return total_params + 2 * vocab_size * d_model
