EXERCISE = 'embedding_share'
MISTAKE = 'divided by the untied total'
EXPECT = 'untied total'

import torch
from torch import nn


def embedding_share(vocab_size, d_model, total_params):
    return vocab_size * d_model / (total_params + vocab_size * d_model)
