"""Chapter 01's learner-side calls: which torch ops ran, and what autograd records (the stretch exercise)."""
from __future__ import annotations

from typing import Any, Callable

import torch

from .base import RecordOps


def record_ops(fn: Callable, inputs: tuple) -> tuple[Any, list]:
    """(fn(*inputs), [(op name, argument shapes), ...])."""
    with RecordOps() as rec:
        out = fn(*inputs)
    return out, rec.calls


def stretch_autograd(fn: Callable, inputs: tuple) -> dict:
    """fn(E, ids) on a fresh leaf copy of E that requires grad, then out.backward(grad_out).

    Reports the output, the class of its grad_fn and whether that is a custom autograd.Function's node, and
    E.grad (None when the output cannot be backpropagated with grad_out).
    """
    E, ids, grad_out = inputs
    E = E.detach().clone().requires_grad_(True)
    out = fn(E, ids)
    node = getattr(out, "grad_fn", None)
    report = {"out": out.detach() if isinstance(out, torch.Tensor) else out,
              "node": type(node).__name__ if node is not None else "None",
              "custom": isinstance(node, torch.autograd.function.BackwardCFunction), "grad": None}
    if isinstance(out, torch.Tensor) and out.requires_grad and out.shape == grad_out.shape:
        out.backward(grad_out.to(out.dtype))
        report["grad"] = E.grad
    return report


PROTOCOLS = {"record_ops": record_ops, "stretch_autograd": stretch_autograd}
