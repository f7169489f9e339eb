"""backward divides the summed gradient of each row by its number of lookups."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'backward divides the summed gradient of each row by its number of lookups'
EXPECT = 'averaged'

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
        out = torch.zeros(ctx.vocab_size, d, dtype=grad_out.dtype).index_add_(0, flat, grad)
        counts = torch.bincount(flat, minlength=ctx.vocab_size).clamp(min=1).to(grad_out.dtype)
        return out / counts[:, None], None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids)
