"""backward flattens grad_out with .view, which raises on the non-contiguous gradient autograd may pass."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'backward flattens grad_out with .view instead of .reshape: a non-contiguous incoming gradient raises'
EXPECT = 'Use .reshape'

import torch


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
        grad = grad_out.view(-1, d)
        return torch.zeros(ctx.vocab_size, d, dtype=grad_out.dtype).index_add_(0, ids.reshape(-1), grad), None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids)
