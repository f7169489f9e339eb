EXERCISE = 'embedding_share'
MISTAKE = 'returned a percentage'
EXPECT = 'percentage'

import torch
from torch import nn


def embedding_share(vocab_size, d_model, total_params):
    return 100 * vocab_size * d_model / total_params
