EXERCISE = 'embedding_backward'
MISTAKE = 'the table size taken from ids.max() + 1 instead of vocab_size'
EXPECT = 'vocab_size'

import torch
import torch.nn.functional as F


def embedding_backward(grad_out, ids, vocab_size):
    d = grad_out.shape[-1]
    V = int(ids.max()) + 1 if ids.numel() else 0
    g = torch.zeros(V, d, dtype=grad_out.dtype)
    return g.index_add_(0, ids.reshape(-1), grad_out.reshape(-1, d))
