"""Plots for chapter 05 (embedding geometry): labelled word maps in 2-D or 3-D, coloured by group."""
from __future__ import annotations

from typing import Sequence

import torch

from .figure_text import _


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
    if dims == 2:
        ax.margins(0.08)  # room for the labels pushed out of a cluster at the edge
    place_labels(ax, coords, [w.strip() for w in words], [colors[g] for g in groups], fontsize=fontsize)
    setters = [ax.set_xlabel, ax.set_ylabel] + ([ax.set_zlabel] if dims == 3 else [])
    for set_label, text in zip(setters, axis_labels):
        set_label(text)
    if title:
        ax.set_title(title)
    if legend:  # 3-D: the top-left corner, which the box of axes leaves empty; 2-D: where there are fewest points
        where = {"loc": "upper left", "bbox_to_anchor": (0.0, 1.0)} if dims == 3 else {"loc": "best"}
        ax.legend(fontsize=8, title=_("group"), title_fontsize=8, **where)
    return ax


def place_labels(ax, coords: torch.Tensor, labels: Sequence[str], colors: Sequence, *, fontsize: float = 7.5,
                 pad: float = 0.004) -> list:
    """Label each point of `coords` ([n, 2] data, or [n, 3] on a 3-D axes) so that no two labels overlap.

    Labels are spread apart on the screen with `spread_labels`; one moved away from its point gets a thin leader
    line. Offsets are in points, so they survive a later `tight_layout`. Set the 3-D view before calling.
    Returns the annotations.
    """
    fig = ax.figure
    fig.canvas.draw()  # text sizes and the 3-D projection are known only once the figure has a renderer
    renderer = fig.canvas.get_renderer()
    coords = torch.as_tensor(coords, dtype=torch.float64)
    if coords.shape[1] == 3:
        from mpl_toolkits.mplot3d import proj3d

        xs, ys, _ = proj3d.proj_transform(*coords.T.numpy(), ax.get_proj())
        anchors = list(zip(xs.tolist(), ys.tolist()))  # the projected points, in the axes' 2-D data coordinates
    else:
        anchors = [tuple(p) for p in coords.tolist()]
    box = ax.get_window_extent(renderer)
    screen = ax.transData.transform(anchors)
    frac = [((x - box.x0) / box.width, (y - box.y0) / box.height) for x, y in screen.tolist()]
    sizes = []
    for label in labels:
        t = ax.text2D(0, 0, label, fontsize=fontsize) if coords.shape[1] == 3 else ax.text(0, 0, label, fontsize=fontsize)
        ext = t.get_window_extent(renderer)
        sizes.append((ext.width / box.width, ext.height / box.height))
        t.remove()
    to_points = 72 / fig.dpi
    out = []
    dot = 8 / min(box.width, box.height)  # a marker is about 5 px across; keep labels off it
    edge = 0.1 if coords.shape[1] == 3 else 0.0  # a 3-D box leaves its outer tenth to ticks and axis labels
    placed = spread_labels(frac, sizes, pad=pad, dot=dot, inside=(edge, 1.0 - edge))
    for anchor, (px, py), (lx, ly), (w, h), label, color in zip(anchors, frac, placed,
                                                                 sizes, labels, colors):
        offset = ((lx - px) * box.width * to_points, (ly - py) * box.height * to_points)
        far = abs(lx - px - 0.008) + abs(ly + h / 2 - py) > 0.02
        leader = {"arrowprops": {"arrowstyle": "-", "color": color, "lw": 0.6, "alpha": 0.7, "shrinkA": 0,
                                 "shrinkB": 2}} if far else {}
        out.append(ax.annotate(label, anchor, xycoords="data", xytext=offset, textcoords="offset points",
                               fontsize=fontsize, color=color, ha="left", va="bottom", **leader))
    return out


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


def spread_labels(points: Sequence[Sequence[float]], sizes: Sequence[tuple[float, float]], *,
                  steps: int = 300, pad: float = 0.004, dot: float = 0.0,
                  inside: tuple[float, float] | None = None) -> list[tuple[float, float]]:
    """Label positions near `points` whose boxes (`sizes`: width, height; all in axes fractions 0-1) do not overlap.

    A label starts just right of its point; overlapping boxes are pushed apart (mostly vertically, where text
    is thin), and each is pulled back toward its point. With `dot` > 0 a label is also pushed off every point
    (a square of side `dot`); with `inside` = (lo, hi) every box is kept within [lo, hi] on both axes.
    Pure Python, deterministic. Returns the lower-left
    corner of every label's box.
    """
    pos = [[x + 0.008, y - h / 2] for (x, y), (_, h) in zip(points, sizes)]
    n = len(pos)

    def push_off_dots() -> bool:
        moved = False
        for p, (w, h) in zip(pos, sizes):
            for x, y in points:
                dx = min(p[0] + w, x + dot / 2) - max(p[0], x - dot / 2)
                dy = min(p[1] + h, y + dot / 2) - max(p[1], y - dot / 2)
                if dx > 0 and dy > 0:
                    moved = True
                    if dy <= dx:
                        p[1] += dy if p[1] + h / 2 >= y else -dy
                    else:
                        p[0] += dx if p[0] + w / 2 >= x else -dx
        return moved

    def keep_inside() -> None:
        if inside is not None:
            lo, hi = inside
            for p, (w, h) in zip(pos, sizes):
                p[0] = min(max(p[0], lo), hi - w)
                p[1] = min(max(p[1], lo), hi - h)

    def push_apart(dots: bool = False) -> bool:
        moved = push_off_dots() if dots else False
        for i in range(n):
            for j in range(i + 1, n):
                (xi, yi), (wi, hi), (xj, yj), (wj, hj) = pos[i], sizes[i], pos[j], sizes[j]
                dx = min(xi + wi, xj + wj) - max(xi, xj) + pad  # overlap widths, > 0 when the boxes touch
                dy = min(yi + hi, yj + hj) - max(yi, yj) + pad
                if dx <= 0 or dy <= 0:
                    continue
                moved = True
                if dy <= dx:  # cheaper to separate vertically
                    push = dy / 2 * (1 if (yi + hi / 2, i) >= (yj + hj / 2, j) else -1)
                    pos[i][1] += push
                    pos[j][1] -= push
                else:
                    push = dx / 2 * (1 if (xi + wi / 2, i) >= (xj + wj / 2, j) else -1)
                    pos[i][0] += push
                    pos[j][0] -= push
        keep_inside()
        return moved

    for _ in range(steps):
        if not push_apart(dot > 0):
            break
        for (x, y), (w, h), p in zip(points, sizes, pos):  # a weak pull back toward the point
            p[0] += 0.02 * (x + 0.008 - p[0])
            p[1] += 0.02 * (y - h / 2 - p[1])
    for _ in range(steps):  # then only push labels apart, until no two boxes overlap
        if not push_apart():
            break
    return [(x, y) for x, y in pos]


def plot_word_zoom(coords: torch.Tensor, words: Sequence[str], groups: Sequence[str], *, ax,
                   xlim: tuple[float, float], ylim: tuple[float, float], title: str = "",
                   axis_labels: Sequence[str] = (), fontsize: float = 9, pad: float = 0.004):
    """A zoomed 2-D word map: only points inside `xlim` x `ylim`, labels spread apart with a thin leader line.

    Use it beside `plot_word_map` where labels of a dense cluster print on top of each other. Returns the axes.
    """
    coords = torch.as_tensor(coords, dtype=torch.float64)
    if coords.ndim != 2 or coords.shape[1] != 2:
        raise ValueError(f"coords must be [n, 2], got {list(coords.shape)}")
    if not (len(words) == len(groups) == coords.shape[0]):
        raise ValueError(f"{coords.shape[0]} points but {len(words)} words and {len(groups)} groups")
    colors = group_colors(groups)
    inside = [i for i, (x, y) in enumerate(coords.tolist()) if xlim[0] <= x <= xlim[1] and ylim[0] <= y <= ylim[1]]
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    for i in inside:
        ax.scatter(*coords[i].tolist(), color=colors[groups[i]], s=22)
    fig = ax.figure
    fig.canvas.draw()  # text sizes are known only once the figure has a renderer
    bbox = ax.get_window_extent()
    renderer = fig.canvas.get_renderer()
    frac = [((x - xlim[0]) / (xlim[1] - xlim[0]), (y - ylim[0]) / (ylim[1] - ylim[0])) for x, y in coords[inside].tolist()]
    sizes = []
    for i in inside:
        t = ax.text(0, 0, words[i].strip(), fontsize=fontsize)
        ext = t.get_window_extent(renderer)
        sizes.append((ext.width / bbox.width, ext.height / bbox.height))
        t.remove()
    for i, (px, py), (lx, ly), (w, h) in zip(inside, frac, spread_labels(frac, sizes, pad=pad), sizes):
        color = colors[groups[i]]
        ax.text(lx, ly, words[i].strip(), fontsize=fontsize, color=color, transform=ax.transAxes,
                va="bottom", ha="left")
        if abs(lx - px - 0.008) + abs(ly + h / 2 - py) > 0.02:
            ax.plot([px, lx], [py, ly + h / 2], transform=ax.transAxes, color=color, lw=0.6, alpha=0.7)
    for set_label, text in zip([ax.set_xlabel, ax.set_ylabel], axis_labels):
        set_label(text)
    if title:
        ax.set_title(title)
    return ax
