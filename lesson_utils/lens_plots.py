"""Figures for chapter 06 (the logit lens): an annotated layers x positions grid and per-layer curves."""
from __future__ import annotations

from typing import Mapping, Sequence

from .figure_text import _


def plot_token_grid(labels: Sequence[Sequence[str]], values, x_labels: Sequence[str], title: str = "",
                    cbar_label: str | None = None, y_labels: Sequence[str] | None = None,
                    vmin: float = 0.0, vmax: float = 1.0, ax=None, fontsize: float = 11):
    """A heat map with one cell per (row, column), coloured by `values` and annotated with `labels`.

    labels: rows x columns of short strings (e.g. the top token of each layer at each position).
    values: array-like of the same shape (e.g. that token's probability).
    cbar_label: the colour bar's label, "probability" (in the course's language) by default.
    Row 0 is drawn at the bottom, so layers read upwards like the stack they come from. `fontsize` (points) sets
    the cell labels and the tick labels; the figure grows with it so the labels stay readable at screen width.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    values = np.asarray(values, dtype=float)
    rows, cols = values.shape
    if len(labels) != rows or any(len(r) != cols for r in labels):
        raise ValueError(f"labels must be {rows} x {cols}, like values")
    if ax is None:
        _fig, ax = plt.subplots(figsize=(0.13 * fontsize * cols + 2.2, 0.028 * fontsize * rows + 1.6))
    image = ax.imshow(values, origin="lower", aspect="auto", cmap="Blues", vmin=vmin, vmax=vmax)
    for r in range(rows):
        for c in range(cols):
            dark = values[r, c] > vmin + 0.6 * (vmax - vmin)
            ax.text(c, r, labels[r][c], ha="center", va="center", fontsize=fontsize,
                    color="white" if dark else "black")
    ax.set_xticks(range(cols), x_labels, fontsize=fontsize - 1)
    ax.set_yticks(range(rows), y_labels if y_labels is not None else [str(r) for r in range(rows)], fontsize=fontsize - 1)
    ax.set_xlabel(_("position (input token)"))
    ax.set_ylabel(_("layer"))
    if title:
        ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, label=_("probability") if cbar_label is None else cbar_label, fraction=0.04)
    return ax


def plot_by_layer(series: Mapping[str, Sequence[float]], ylabel: str, title: str = "", logy: bool = False,
                  ax=None, marker: str = "o", start: int = 0, xlabel: str | None = None):
    """One line per named series against the layer index; the first value is drawn at x = `start`. `xlabel`
    defaults to "layer (0 = embedding output)" in the course's language."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, ys in series.items():
        ax.plot(range(start, start + len(ys)), list(ys), marker=marker, markersize=3, label=name)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(_("layer (0 = embedding output)") if xlabel is None else xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(series) > 1:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax
