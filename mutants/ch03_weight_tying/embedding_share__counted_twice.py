EXERCISE = 'embedding_share'
MISTAKE = 'counted the tied table twice (embedding and head)'
EXPECT = 'counted the table twice'

import torch
from torch import nn


def embedding_share(vocab_size, d_model, total_params):
    return 2 * vocab_size * d_model / total_params
