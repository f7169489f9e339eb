"""backward accumulates in float32 whatever the dtype of E."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'backward accumulates in float32 whatever the dtype of E'
EXPECT = 'precision difference, not logic'

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
        out = torch.zeros(ctx.vocab_size, d, dtype=torch.float32).index_add_(0, flat, grad.float())
        return out.to(grad_out.dtype), None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids)
