"""backward assigns grad[ids] = grad_out, so a repeated id keeps one gradient."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'backward assigns grad[ids] = grad_out, so a repeated id keeps one gradient'
EXPECT = 'SUM of its gradients'

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
        out[flat] = grad
        return out, None


def embedding_autograd(E, ids):
    return Lookup.apply(E, ids)
