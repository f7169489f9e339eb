"""Chapter 07's learner-side calls: a loss and its gradients."""
from __future__ import annotations

from typing import Callable

import torch

from .base import RecordOps

def backward(fn: Callable, inputs: tuple) -> tuple:
    """fn(h, W, *rest) on fresh leaf copies of h and W that require grad, then loss.backward().

    Returns (loss, h.grad, W.grad, ops as record_ops reports them, shapes of the tensors autograd saved
    for backward other than views of h and W); the grads are None when the loss does not require grad.
    The judge recomputes the gradients itself; only what autograd kept alive is observed here.
    """
    h, W, *rest = inputs
    h = h.detach().clone().requires_grad_(True)
    W = W.detach().clone().requires_grad_(True)
    own = {h.untyped_storage().data_ptr(), W.untyped_storage().data_ptr()}
    saved: list[tuple[int, ...]] = []

    def pack(x):
        if isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() not in own:
            saved.append(tuple(x.shape))
        return x

    with RecordOps() as rec, torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        loss = fn(h, W, *rest)
    if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
        return loss, None, None, rec.calls, saved
    loss.backward()
    return loss.detach(), h.grad, W.grad, rec.calls, saved


PROTOCOLS = {"backward": backward}
