"""Printing numbers that are the same on every CPU, so notebook cells show the claim, not the rounding.

Native kernels and the portable ones (ATEN_CPU_CAPABILITY=default) differ in the last bits of a float. That changes
a printed number only when the value sits next to a rounding edge, or turns a tiny value into -0.00.
"""
from __future__ import annotations

import torch


def portable_format(x: float | torch.Tensor, digits: int, margin: float = 0.02) -> str:
    """`x` with `digits` decimals, never "-0.00"; raises ValueError if `x` lies within `margin` of a last digit of a
    rounding edge (there another CPU's last-bit difference could print a different digit)."""
    x = float(x)
    fraction = abs(x) * 10**digits % 1
    if abs(fraction - 0.5) <= margin:
        raise ValueError(f"{x!r} sits on a rounding edge at {digits} decimals: print it with another number of digits")
    return f"{round(x, digits) + 0.0:.{digits}f}"
