"""Learner-side calls of the stretch exercises of chapters 01 and 03 (merged into grading.protocols.PROTOCOLS).

Reference-free: they only call the learner's function and report what they observe; the judge recomputes
every value it can from what comes back.
"""
from __future__ import annotations

from typing import Callable

import torch


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


PROTOCOLS = {"stretch_autograd": stretch_autograd}
