EXERCISE = 'untied_total'
MISTAKE = "returned only the two tables' parameters, not the whole model"
EXPECT = 'WHOLE model'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return 2 * vocab_size * d_model
