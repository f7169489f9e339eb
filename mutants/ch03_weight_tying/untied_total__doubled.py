EXERCISE = 'untied_total'
MISTAKE = 'doubled the whole model'
EXPECT = 'doubled the whole model'

import torch
from torch import nn


def untied_total(vocab_size, d_model, total_params):
    return 2 * total_params
