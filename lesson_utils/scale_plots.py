"""Figures for chapter 07 (the embedding and the head at scale)."""
from __future__ import annotations

from typing import Mapping, Sequence

from .edition import N_
from .figure_text import _

SAMPLING_COSTS_TITLE = N_("Where sampling time goes")  # plot_sampling_costs' default title


def plot_sampling_costs(times: Mapping[tuple[str, int, int], float], ops: Sequence[str], vocab_sizes: Sequence[int],
                        batches: Sequence[int], title: str | None = None, axes=None):
    """Grouped bars, one panel per batch size: the time of each operation (colour) at each vocabulary size.

    times: {(operation, V, batch): seconds}. The y axis is logarithmic (the operations differ by orders of
    magnitude) and in milliseconds. `title` defaults to SAMPLING_COSTS_TITLE in the course's language.
    Returns the list of axes.
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _fig, axes = plt.subplots(1, len(batches), figsize=(6.2 * len(batches), 3.8), squeeze=False)
        axes = list(axes[0])
    title = _(SAMPLING_COSTS_TITLE) if title is None else title
    width = 0.8 / len(ops)
    for ax, batch in zip(axes, batches):
        for j, op in enumerate(ops):
            xs = [i + (j - (len(ops) - 1) / 2) * width for i in range(len(vocab_sizes))]
            ax.bar(xs, [1e3 * times[(op, v, batch)] for v in vocab_sizes], width=width, label=op)
        ax.set_xticks(range(len(vocab_sizes)), [f"V = {v:,}" for v in vocab_sizes])
        ax.set_yscale("log")
        ax.set_ylabel(_("time per call, ms (log scale)"))
        ax.set_title(_("{title}: batch {batch}", title=title, batch=batch))
    axes[0].legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)  # below the bars, not on them
    return axes


def plot_bytes_per_token(rows: Sequence[tuple[str, Sequence[int]]], groups: Sequence[str], title: str = "", ax=None):
    """Horizontal grouped bars of bytes per token (log scale): one group per setting, one bar per method.

    rows: [(method, [bytes for each group])].
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(8, 0.22 * len(rows) * len(groups) + 1.4))
    height = 0.8 / len(rows)
    for j, (method, values) in enumerate(rows):
        ys = [i + (j - (len(rows) - 1) / 2) * height for i in range(len(groups))]
        ax.barh(ys, list(values), height=height, label=method)
    ax.set_yticks(range(len(groups)), list(groups))
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(_("bytes each rank receives per token (log scale)"))
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # right of the axes, not on the bars
    if title:
        ax.set_title(title)
    return ax
