EXERCISE = 'embedding_backward'
MISTAKE = 'g[ids] = grad_out: repeated ids overwrite each other'
EXPECT = 'overwrote'

import torch
import torch.nn.functional as F


def embedding_backward(grad_out, ids, vocab_size):
    d = grad_out.shape[-1]
    g = torch.zeros(vocab_size, d, dtype=grad_out.dtype)
    g[ids.reshape(-1)] = grad_out.reshape(-1, d)
    return g
