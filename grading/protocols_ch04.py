"""Chapter 04's own learner-side calls (merged into grading.protocols.PROTOCOLS). Reference-free: they only
call the learner's function and report what it returned."""
from __future__ import annotations

from typing import Any, Callable

import torch


def t0_interleaved(fn: Callable, inputs: tuple) -> dict:
    """For each row of a [N, V] tensor: a temperature-0 call, then a temperature-1 call, on ONE generator (seed 7).

    A temperature-0 call that takes a draw from the generator shifts every later temperature-1 draw.
    """
    rows = inputs[0]
    gen = torch.Generator().manual_seed(7)
    draws: list[Any] = []
    for r in rows:
        draws.append(fn(r.clone(), 0.0, None, None, generator=gen))
        draws.append(fn(r.clone(), 1.0, None, None, generator=gen))
    return {"draws": draws, "again": []}


PROTOCOLS = {"t0_interleaved": t0_interleaved}
