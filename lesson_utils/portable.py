"""Printing numbers that are the same on every CPU, so notebook cells show the claim, not the rounding.

Native kernels and the portable ones (ATEN_CPU_CAPABILITY=default) differ in the last bits of a float. That changes
a printed number when the value sits next to a rounding edge, turns a tiny value into -0.0, or reorders two scores
that are equal up to those bits (a printed rank). `clean_round` and `portable_format` handle the first two,
`exact_rank` refuses the third.
"""
from __future__ import annotations

import torch


def clean_round(x: float | torch.Tensor, digits: int) -> float:
    """`x` rounded to `digits` decimals, with -0.0 turned into 0.0 (a value that is 0 up to float noise)."""
    return round(float(x), digits) + 0.0


def gap_to_nearest(scores: torch.Tensor, index: int) -> float:
    """The smallest |scores[j] - scores[index]| over j != index: how far a rank is from flipping by rounding."""
    diff = (scores - scores[index]).abs()
    diff[index] = float("inf")
    return float(diff.min())


def exact_rank(scores: torch.Tensor, index: int, margin: float = 5e-5, exact_below: int | None = None) -> int:
    """How many of the 1-D `scores` are strictly larger than `scores[index]` (0 = the top).

    Raises ValueError when another score lies within `margin` of it: such a near-tie may order the other way on
    another CPU, so the rank would not be a portable number. With `exact_below`, only ranks below it must be
    exact (larger ones are shown coarsely, e.g. as a percentage), so a near-tie there is accepted.
    """
    if scores.dim() != 1:
        raise ValueError(f"exact_rank needs a 1-D tensor of scores, got shape {list(scores.shape)}")
    value = scores[index]
    gap = gap_to_nearest(scores, index)
    rank = int((scores > value).sum())
    if gap <= margin and (exact_below is None or rank < exact_below):
        raise ValueError(f"score {index} is within {gap:.1e} of another score (margin {margin:g}): "
                         "its rank could differ between CPUs; compare with a larger margin or another token")
    return rank


def portable_format(x: float | torch.Tensor, digits: int, margin: float = 0.02) -> str:
    """`x` with `digits` decimals, never "-0.00"; raises ValueError if `x` lies within `margin` of a last digit of a
    rounding edge (there another CPU's last-bit difference could print a different digit)."""
    x = float(x)
    fraction = abs(x) * 10**digits % 1
    if abs(fraction - 0.5) <= margin:
        raise ValueError(f"{x!r} sits on a rounding edge at {digits} decimals: print it with another number of digits")
    return f"{round(x, digits) + 0.0:.{digits}f}"
