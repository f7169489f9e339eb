EXERCISE = 'embedding_share'
MISTAKE = 'computed with a float32 tensor (torch.tensor(V * d) / total): 7 significant digits'
EXPECT = 'float32'

import torch
from torch import nn


def embedding_share(vocab_size, d_model, total_params):
    return float(torch.tensor(vocab_size * d_model, dtype=torch.float32) / total_params)
