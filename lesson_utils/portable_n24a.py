"""Small helpers that keep printed numbers identical on every CPU, so notebook cells show the claim, not the rounding.

Two things differ between CPU kernels (native against ATEN_CPU_CAPABILITY=default): the last bits of a float, which
can turn a printed 0.000 into -0.000, and the order of two scores that are equal up to those bits, which can change
a printed rank. `clean_round` removes the first, `exact_rank` refuses the second.
"""
from __future__ import annotations

import torch


def clean_round(x: float | torch.Tensor, digits: int) -> float:
    """`x` rounded to `digits` decimals, with -0.0 turned into 0.0 (a value that is 0 up to float noise)."""
    return round(float(x), digits) + 0.0


def exact_rank(scores: torch.Tensor, index: int, margin: float = 5e-5, exact_below: int | None = None) -> int:
    """How many of the 1-D `scores` are strictly larger than `scores[index]` (0 = the top).

    Raises ValueError when another score lies within `margin` of it: such a near-tie may order the other way on
    another CPU, so the rank would not be a portable number. With `exact_below`, only ranks below it must be
    exact (larger ones are shown coarsely, e.g. as a percentage), so a near-tie there is accepted.
    """
    if scores.dim() != 1:
        raise ValueError(f"exact_rank needs a 1-D tensor of scores, got shape {list(scores.shape)}")
    value = scores[index]
    others = torch.cat([scores[:index], scores[index + 1:]])
    gap = float((others - value).abs().min()) if others.numel() else float("inf")
    rank = int((scores > value).sum())
    if gap <= margin and (exact_below is None or rank < exact_below):
        raise ValueError(f"score {index} is within {gap:.1e} of another score (margin {margin:g}): "
                         "its rank could differ between CPUs; compare with a larger margin or another token")
    return rank
