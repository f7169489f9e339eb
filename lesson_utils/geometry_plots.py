"""Plots for chapter 05 (embedding geometry): labelled word maps in 2-D or 3-D, coloured by group."""
from __future__ import annotations

from typing import Sequence

import torch


def group_colors(groups: Sequence[str]) -> dict[str, tuple]:
    """One distinct colour per group name, in order of first appearance (matplotlib's tab10 palette)."""
    import matplotlib

    palette = matplotlib.colormaps["tab10"].colors
    names = list(dict.fromkeys(groups))
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def plot_word_map(coords: torch.Tensor, words: Sequence[str], groups: Sequence[str], *, ax=None,
                  title: str = "", axis_labels: Sequence[str] = (), fontsize: float = 7.5, legend: bool = True):
    """Scatter `coords` ([n, 2] or [n, 3]) with each point labelled by its word and coloured by its group.

    Pass a 3-D axes (projection="3d") for 3 columns; one is made if `ax` is None. Returns the axes.
    """
    import matplotlib.pyplot as plt

    coords = torch.as_tensor(coords, dtype=torch.float64)
    n, dims = coords.shape
    if dims not in (2, 3):
        raise ValueError(f"coords must have 2 or 3 columns, got {dims}")
    if not (len(words) == len(groups) == n):
        raise ValueError(f"{n} points but {len(words)} words and {len(groups)} groups")
    if ax is None:
        fig = plt.figure(figsize=(7, 6))
        ax = fig.add_subplot(projection="3d" if dims == 3 else None)
    colors = group_colors(groups)
    for name, color in colors.items():
        rows = [i for i, g in enumerate(groups) if g == name]
        extra = {"depthshade": False} if dims == 3 else {}
        ax.scatter(*coords[rows].T.tolist(), color=color, label=name, s=22, **extra)
    for (point, word, group) in zip(coords.tolist(), words, groups):
        ax.text(*point, " " + word.strip(), fontsize=fontsize, color=colors[group])
    setters = [ax.set_xlabel, ax.set_ylabel] + ([ax.set_zlabel] if dims == 3 else [])
    for set_label, text in zip(setters, axis_labels):
        set_label(text)
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(fontsize=8, loc="best", title="group", title_fontsize=8)
    return ax


def compact_png(fig, colors: int = 256) -> str | None:
    """`fig` as a base64 PNG with a palette of `colors` colours (about a third of a full-colour PNG's size).

    Renders like IPython's inline backend (the figure's dpi, tight bounding box); None for an empty figure.
    """
    import base64
    import io

    from PIL import Image

    if not fig.axes:
        return None
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=fig.dpi, bbox_inches="tight", facecolor=fig.get_facecolor())
    image = Image.open(io.BytesIO(full.getvalue())).convert("RGB").quantize(colors)
    small = io.BytesIO()
    image.save(small, format="png", optimize=True)
    return base64.b64encode(small.getvalue()).decode("ascii")


def use_compact_figures(colors: int = 256) -> bool:
    """Make `plt.show()` in this Jupyter kernel store figures as palette PNGs (see `compact_png`).

    Keeps notebooks with many figures small. Returns False (and changes nothing) outside IPython.
    """
    from functools import partial

    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    plt.switch_backend(matplotlib.get_backend())  # load the inline backend now, or it would re-register its own
    shell.display_formatter.formatters["image/png"].for_type(Figure, partial(compact_png, colors=colors))
    return True
