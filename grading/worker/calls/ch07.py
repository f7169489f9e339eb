"""Chapter 07's learner-side calls: a loss and its gradients."""
from __future__ import annotations

from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .base import RecordOps

# The judge's instruments, taken when this module is imported: the child imports the calls before the learner's
# file, so a learner module that replaces torch.autograd.graph.saved_tensors_hooks (or these functions) at import
# time replaces names, not these objects. `backward` also probes them before and after the learner's call.
_PUSH_SAVED_HOOKS = torch._C._autograd._push_saved_tensors_default_hooks
_POP_SAVED_HOOKS = torch._C._autograd._pop_saved_tensors_default_hooks
_USE_COUNT = torch._C._storage_Use_Count


class BackwardPeak(TorchDispatchMode):
    """The most bytes that storages made during the mode (each at least `least` bytes) held at once: after every op,
    a storage counts while anything but this mode still holds it (a recomputed chunk's log-softmax that checkpoint
    keeps, a gradient). `ops` counts the ops seen, so a mode that saw nothing is reported, never trusted."""

    def __init__(self, least: int):
        super().__init__()
        self.least, self.held, self.peak, self.ops = least, {}, 0, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.ops += 1
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                storage = t.untyped_storage()
                if storage.nbytes() >= self.least and storage.data_ptr() not in self.held:
                    self.held[storage.data_ptr()] = storage
        for key in [k for k, st in self.held.items() if _USE_COUNT(st._cdata) <= 1]:  # only this mode holds it
            del self.held[key]
        self.peak = max(self.peak, sum(st.nbytes() for st in self.held.values()))
        return out


def _probe_saved(seen: list) -> bool:
    """Whether the saved-tensor hooks now installed report what autograd saves (x * x saves x); the probe's own
    entries are taken out of `seen` again."""
    before = len(seen)
    x = torch.ones(3, requires_grad=True)
    _ = x * x
    worked = len(seen) > before
    del seen[before:]
    return worked


def _probe_ops(rec: RecordOps) -> bool:
    """Whether `rec` still records torch calls (the probe's own entry is taken out again)."""
    before = len(rec.calls)
    torch.add(torch.zeros(1), 1)
    worked = len(rec.calls) > before
    del rec.calls[before:]
    return worked


def backward(fn: Callable, inputs: tuple) -> tuple:
    """fn(h, W, *rest) on fresh leaf copies of h and W that require grad, then loss.backward().

    Returns (loss, h.grad, W.grad, ops as record_ops reports them, shapes of the tensors autograd saved
    for backward other than views of h and W, the instruments that stopped working, the most numbers (elements of
    h's dtype, in blocks of at least a row of V) that the backward pass held at once); the grads and the peak are
    None when the loss does not require grad. The judge recomputes the gradients itself; only what autograd kept
    alive is observed here. The hooks are installed through functions taken before learner code ran and probed before
    and after the learner's call: an instrument that was replaced or removed is reported, never trusted.
    """
    h, W, *rest = inputs
    h = h.detach().clone().requires_grad_(True)
    W = W.detach().clone().requires_grad_(True)
    own = {h.untyped_storage().data_ptr(), W.untyped_storage().data_ptr()}
    saved: list[tuple[int, ...]] = []
    blind: list[str] = []

    def pack(x):
        if isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() not in own:
            saved.append(tuple(x.shape))
        return x

    _PUSH_SAVED_HOOKS(pack, lambda x: x)
    try:
        with RecordOps() as rec:
            if not (_probe_saved(saved) and _probe_ops(rec)):
                blind.append("saved-tensor hooks or op recorder (already before your call)")
            loss = fn(h, W, *rest)
            if not _probe_saved(saved):
                blind.append("saved-tensor hooks")
            if not _probe_ops(rec):
                blind.append("op recorder")
    finally:
        try:
            _POP_SAVED_HOOKS()
        except RuntimeError:  # the learner's code popped them already (the probe reports it)
            pass
    if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
        return loss, None, None, rec.calls, saved, blind, None
    peak = BackwardPeak(least=W.shape[0] * W.element_size())
    with peak:
        loss.backward()
    if not peak.ops:
        blind.append("backward-pass memory meter")
    return loss.detach(), h.grad, W.grad, rec.calls, saved, blind, peak.peak // h.element_size()


PROTOCOLS = {"backward": backward}
