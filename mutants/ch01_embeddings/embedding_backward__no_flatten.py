EXERCISE = 'embedding_backward'
MISTAKE = 'index_add_ without flattening: 2-D ids fail'
EXPECT = None

import torch
import torch.nn.functional as F


def embedding_backward(grad_out, ids, vocab_size):
    g = torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
    return g.index_add_(0, ids, grad_out)
