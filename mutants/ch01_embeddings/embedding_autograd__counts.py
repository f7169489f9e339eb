"""backward adds 1 per lookup (a one-hot count) instead of the rows of grad_out."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'backward adds 1 per lookup (a one-hot count) instead of the rows of grad_out'
EXPECT = 'counts the lookups'

import torch
import torch.nn.functional as F


class Lookup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, E, ids):
        ctx.save_for_backward(ids)
        ctx.vocab_size = E.shape[0]
        return E[ids]

    @staticmethod
    def backward(ctx, grad_out):
        (ids,) = ctx.saved_tensors
        d = grad_out.shape[-1]
        flat, grad = ids.reshape(-1), grad_out.reshape(-1, d)
        out = torch.zeros(ctx.vocab_size, d, dtype=grad_out.dtype)
        return out.index_add_(0, flat, torch.ones_like(grad)), None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids)
