EXERCISE = 'untied_total'
MISTAKE = 'subtracted the table'
EXPECT = 'subtracted the table'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return total_params - vocab_size * d_model
