"""Figures for chapter 02 (the LM head): per-dimension contributions to one logit, and cost against T.

The notebook computes every number; these functions only draw what they are given.
"""
from __future__ import annotations

from typing import Sequence

import torch

from .figure_text import _

POSITIVE, NEGATIVE = "tab:green", "tab:red"


def plot_contributions(contributions: torch.Tensor, title: str = "", ax=None):
    """Bar per dimension of h[i] * w[i] (green positive, red negative); the bars sum to the logit."""
    import matplotlib.pyplot as plt

    c = contributions.detach().double().cpu()
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 3))
    colors = [POSITIVE if v >= 0 else NEGATIVE for v in c.tolist()]
    ax.bar(range(len(c)), c.tolist(), color=colors, width=1.0 if len(c) > 50 else 0.8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xlabel(_("dimension i"))
    ax.set_ylabel("h[i] * w[i]")
    ax.set_title(title or _("sum of the bars = logit = {value:.3f}", value=float(c.sum())))
    return ax


def plot_cumulative_contributions(contributions: torch.Tensor, title: str = "", ax=None):
    """Running sum of the contributions, largest |h[i] * w[i]| first, ending at the logit."""
    import matplotlib.pyplot as plt

    c = contributions.detach().double().cpu()
    ordered = c[c.abs().argsort(descending=True)]
    running = ordered.cumsum(0)
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 3))
    ax.plot(range(1, len(c) + 1), running.tolist(), color="tab:blue")
    ax.axhline(float(c.sum()), color="tab:orange", linestyle="--",
               label=_("logit = {value:.3f}", value=float(c.sum())))
    ax.set_xscale("log")
    ax.set_xlabel(_("number of dimensions added (largest |h[i] * w[i]| first)"))
    ax.set_ylabel(_("running sum"))
    ax.set_title(title or _("how the logit builds up"))
    ax.legend(loc="lower right")
    return ax


def plot_cost_ratio(positions: Sequence[int], ratios: Sequence[float], title: str = "", ax=None):
    """Measured time(T positions) / time(1 position) against T, with the FLOP ratio T for reference."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(positions, positions, "--", color="gray", label=_("FLOP ratio = T"))
    ax.plot(positions, ratios, "o-", color="tab:blue", label=_("measured time ratio"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(_("positions T given to the head"))
    ax.set_ylabel(_("cost relative to 1 position"))
    ax.set_title(title or _("LM head on T positions vs on the last one"))
    ax.legend()
    return ax
