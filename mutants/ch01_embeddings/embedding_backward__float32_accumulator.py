EXERCISE = 'embedding_backward'
MISTAKE = 'a float32 zeros table (the default dtype): float64 gradients come back float32'
EXPECT = 'only the dtype differs'

import torch
import torch.nn.functional as F


def embedding_backward(grad_out, ids, vocab_size):
    d = grad_out.shape[-1]
    g = torch.zeros(vocab_size, d)
    return g.index_add_(0, ids.reshape(-1), grad_out.reshape(-1, d).float())
