"""forward returns E[ids.reshape(-1)]: the shape of the ids is lost."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'forward returns E[ids.reshape(-1)]: the shape of the ids is lost'
EXPECT = 'flattened the ids'

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
        return torch.zeros(ctx.vocab_size, d, dtype=grad_out.dtype).index_add_(0, flat, grad), None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids.reshape(-1))
