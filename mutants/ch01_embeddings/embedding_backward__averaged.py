EXERCISE = 'embedding_backward'
MISTAKE = 'repeated ids averaged instead of summed'
EXPECT = 'averaged'

import torch
import torch.nn.functional as F


def embedding_backward(grad_out, ids, vocab_size):
    d = grad_out.shape[-1]
    flat = ids.reshape(-1)
    g = torch.zeros(vocab_size, d, dtype=grad_out.dtype).index_add_(0, flat, grad_out.reshape(-1, d))
    counts = torch.bincount(flat, minlength=vocab_size).clamp(min=1).to(g.dtype)
    return g / counts[:, None]
