"""A figure's data, apart from its words: so the two editions' figures can be proved to draw the same numbers.

A Chinese figure's picture differs from the English one (its title, axes and legend are translated), so the saved
PNGs cannot be compared. Every figure a notebook shows carries, in its output's metadata (kernel_hooks.py),
`figure_data`: a summary of what it plots (lines, bars, points, areas, images, axis limits): for each artist its
count, sum of magnitudes, sum of squares, minimum and maximum (no signed sum: centred data sums to noise). It is
blind to text and layout: limits, not ticks (how many ticks fit follows the axes' size), and no arrows or lines
placed in the axes' own frame (leader lines to labels spread by their size). `same_data` compares two summaries
within a tolerance, since a computation repeated in another process (a PCA, a threaded sum) may differ in its last
digits. tools/translations.py accepts a translated figure only when its summary is the English figure's.
"""
from __future__ import annotations

import math

import numpy as np

KEY = "figure_data"
REL_TOL, ABS_TOL = 1e-4, 1e-6


def _summary(values) -> list[float]:
    array = np.ma.filled(np.ma.asarray(values, dtype=float), np.nan).ravel()
    array = array[np.isfinite(array)]
    if not array.size:
        return [0.0]
    return [float(array.size), *(float("%.8g" % x) for x in (np.abs(array).sum(), (array ** 2).sum(), array.min(),
                                                               array.max()))]


def figure_summary(fig) -> list[float]:
    """The numbers `fig` draws, summarised axes by axes and artist by artist (in drawing order); none of its text."""
    from matplotlib.collections import Collection, PolyCollection
    from matplotlib.image import AxesImage
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, Patch
    from matplotlib.spines import Spine

    out: list[float] = []
    for ax in fig.axes:
        if ax.get_aspect() == "auto" or ax.get_adjustable() == "box":  # else the limits follow the axes' shape
            out += [float("%.8g" % x) for x in (*ax.get_xlim(), *ax.get_ylim())]
        for artist in ax.get_children():
            if isinstance(artist, Line2D):
                if artist.get_transform() is not ax.transAxes:  # a line placed in the axes' frame follows the text
                    out += _summary(artist.get_xydata())
            elif isinstance(artist, Patch) and not isinstance(artist, (Spine, FancyArrowPatch)) \
                    and artist is not ax.patch:
                out += _summary(artist.get_patch_transform().transform(artist.get_path().vertices))
            elif isinstance(artist, Collection):
                out += _summary(artist.get_offsets())
                if artist.get_array() is not None:
                    out += _summary(artist.get_array())
                if isinstance(artist, PolyCollection):
                    out += _summary(np.concatenate([p.vertices for p in artist.get_paths()] or [np.zeros((0, 2))]))
            elif isinstance(artist, AxesImage):
                out += _summary(artist.get_array())
    return out


def same_data(a: list[float] | None, b: list[float] | None) -> bool:
    """Two figure summaries agree: the same length, every number within REL_TOL (or ABS_TOL near zero)."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL) for x, y in zip(a, b))
