EXERCISE = "chunked_cross_entropy"
MISTAKE = "a plain autograd loop (every chunk's logits kept for backward) that, at import, replaces torch.autograd.graph.saved_tensors_hooks with a no-op to hide it"
EXPECT = "autograd kept"
import contextlib

import torch
import torch.nn.functional as F


class _NoHooks(contextlib.nullcontext):
    def __init__(self, *args, **kwargs):
        super().__init__()


torch.autograd.graph.saved_tensors_hooks = _NoHooks


def chunked_cross_entropy(h, W, targets, chunk):
    total = h.new_zeros(())
    for i in range(0, h.shape[0], chunk):
        total = total + F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk], reduction="sum")
    return total / h.shape[0]
