EXERCISE = 'embedding_share'
MISTAKE = 'integer division //'
EXPECT = 'integer division'

import torch
from torch import nn


def embedding_share(vocab_size, d_model, total_params):
    return vocab_size * d_model // total_params
