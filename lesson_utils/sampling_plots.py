"""Figures for chapter 04 (softmax and sampling): reshaped next-token distributions and an interactive view.

Nothing here samples or filters by itself: the notebook passes in the warp to show (built from
transformers' logits warpers, or from the learner's own functions), so a figure shows exactly what
that code does.
"""
from __future__ import annotations

import os
from typing import Callable, Mapping, Sequence

import torch

from . import edition
from .display import token_label
from .figure_text import _

Warp = Callable[[torch.Tensor, float, int, float], torch.Tensor]  # (logits, T, top_k, top_p) -> probabilities


def plot_reshaped(labels: Sequence[str], before: Sequence[float], after: Sequence[float], title: str = "",
                  before_name: str | None = None, after_name: str | None = None, ax=None):
    """Grouped horizontal bars: each token's probability before and after a change (largest first at the top).

    The legend names the two bars `before_name` and `after_name` ("before" and "after" in the course's language
    by default).
    A token the change removed (probability 0 after) is marked with an 'x' at zero.
    """
    import matplotlib.pyplot as plt

    n = len(labels)
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 0.32 * n + 1.4))
    y = torch.arange(n, dtype=torch.float64).flip(0)
    before_name = _("before") if before_name is None else before_name
    after_name = _("after") if after_name is None else after_name
    ax.barh(y + 0.2, list(before), height=0.4, color="tab:gray", alpha=0.55, label=before_name)
    ax.barh(y - 0.2, list(after), height=0.4, color="tab:blue", label=after_name)
    removed = [float(yi) - 0.2 for yi, a in zip(y.tolist(), after) if a == 0]
    if removed:
        ax.plot([0] * len(removed), removed, "x", color="tab:red", label=_("removed"))
    ax.set_yticks(y.tolist(), list(labels))
    ax.set_xlabel(_("probability"))
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_frequencies(labels: Sequence[str], probs: Sequence[float], freqs: Sequence[float], title: str = "", ax=None):
    """Vertical grouped bars: model probability next to the observed frequency of each token."""
    import matplotlib.pyplot as plt

    n = len(labels)
    if ax is None:
        _fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * n), 3.6))
    x = torch.arange(n, dtype=torch.float64)
    ax.bar(x - 0.2, list(probs), width=0.4, color="tab:blue", label=_("probability"))
    ax.bar(x + 0.2, list(freqs), width=0.4, color="tab:orange", label=_("observed frequency"))
    ax.set_xticks(x.tolist(), list(labels), rotation=60, ha="right")
    ax.set_ylabel(_("share"))
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_cumulative_mass(probs: torch.Tensor, cutoffs: Mapping[str, int], label: str = "", ax=None,
                         color: str | None = None):
    """Cumulative probability of the most likely tokens against their rank (log x), with cut-off markers.

    probs:   probabilities [V] (any order; they are sorted here).
    cutoffs: name -> number of tokens a filter keeps (for example {"top-k 50": 50}); each is drawn as a
             dotted vertical line at that rank with a dot at the mass the kept tokens hold.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(8, 4.5))
    cum = torch.sort(probs.double(), descending=True).values.cumsum(0)
    ranks = torch.arange(1, cum.numel() + 1)
    (line,) = ax.plot(ranks.tolist(), cum.tolist(), color=color, label=label or None)
    for name, n in cutoffs.items():
        n = max(1, min(int(n), cum.numel()))
        mass = float(cum[n - 1])
        ax.axvline(n, color=line.get_color(), ls=":", lw=1)
        ax.plot([n], [mass], "o", color=line.get_color())
        ax.annotate(_("{name}: {n:,} kept, {mass:.0%}", name=name, n=n, mass=mass), (n, mass),
                    textcoords="offset points", xytext=(4, -12), fontsize=8, color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlim(1, cum.numel())
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(_("rank of the token (1 = most likely), log scale"))
    ax.set_ylabel(_("cumulative probability"))
    if label:
        ax.legend(loc="lower right", fontsize=8)
    return ax


def widget_frontend_likely() -> bool:
    """False where sliders cannot be shown: no IPython kernel, no ipywidgets, or a headless runner.

    A kernel cannot see whether a browser is attached, so the known headless runners are detected:
    pytest (nbval sets PYTEST_VERSION in the kernel's environment) and nbconvert/nbclient (which keep
    the IPython history in memory). Pass `interactive=` explicitly to override.
    """
    try:
        from IPython import get_ipython
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return False
    if "PYTEST_VERSION" in os.environ:
        return False
    hist = getattr(getattr(shell, "history_manager", None), "hist_file", "")
    return str(hist) != ":memory:"


def _top_tokens(logits: torch.Tensor, top: int) -> torch.Tensor:
    return torch.topk(logits, top).indices


def show_distribution(logits: torch.Tensor, tokenizer, warp: Warp, temperature: float = 1.0, top_k: int = 0,
                      top_p: float = 1.0, top: int = 15, ax=None):
    """One static panel: the `top` most likely tokens at T = 1, before and after `warp(logits, T, k, p)`."""
    base = torch.softmax(logits.double(), -1)
    after = warp(logits, temperature, top_k, top_p).double()
    ids = _top_tokens(logits, top)
    kept = int((after > 0).sum())
    title = _("T = {t:g}, top-k = {k}, top-p = {p:g}: {kept:,} tokens kept", t=temperature, k=top_k or _("off"),
              p=top_p, kept=kept)
    ax = plot_reshaped([token_label(tokenizer, i) for i in ids.tolist()], base[ids].tolist(), after[ids].tolist(),
                       title, _("T = 1, no filter"), _("after"), ax=ax)
    return ax


STATIC_SETTINGS = ((1.0, 0, 0.9), (0.5, 0, 1.0), (1.5, 0, 1.0), (0.7, 50, 0.9))


def interactive_distribution(logits: torch.Tensor, tokenizer, warp: Warp, top: int = 15,
                             interactive: bool | None = None, static_settings=STATIC_SETTINGS) -> None:
    """Sliders for temperature, top-k and top-p that redraw the distribution; static figures without a frontend.

    warp(logits, temperature, top_k, top_p) -> probabilities [V]; top_k = 0 and top_p = 1 mean 'off'.
    Without a widget frontend, one panel per (temperature, top_k, top_p) in `static_settings` is drawn.
    """
    import matplotlib.pyplot as plt

    if interactive is None:
        interactive = widget_frontend_likely()
    if not interactive:
        print(edition._("No widget frontend here: static panels for a few settings instead of sliders."))
        cols = 2
        rows = (len(static_settings) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(13, rows * (0.32 * top + 1.6)), squeeze=False)
        for ax, (t, k, p) in zip(axes.flat, static_settings):
            show_distribution(logits, tokenizer, warp, t, k, p, top, ax=ax)
        for ax in list(axes.flat)[len(static_settings):]:
            ax.set_visible(False)
        fig.tight_layout()
        plt.show()
        return
    import ipywidgets as w
    from IPython.display import display

    sliders = {
        "temperature": w.FloatLogSlider(value=1.0, base=10, min=-1, max=0.6, step=0.02,
                                        description=edition._("temperature")),
        "top_k": w.IntSlider(value=0, min=0, max=100, description=edition._("top-k (0=off)")),
        "top_p": w.FloatSlider(value=0.9, min=0.05, max=1.0, step=0.01, description="top-p"),
    }

    def draw(temperature: float, top_k: int, top_p: float) -> None:
        show_distribution(logits, tokenizer, warp, temperature, top_k, top_p, top)
        plt.show()

    out = w.interactive_output(draw, sliders)
    display(w.VBox([w.HBox(list(sliders.values())), out]))


RECAP_STAGES = ("h", "head", "logits", "softmax", "probabilities", "greedy", "sampling", "embedding", "tying")


def plot_path_recap(numbers: Mapping[str, str] | None = None, ax=None):
    """One-figure map of the path from the last hidden vector to the next token, with weight tying's benefits.

    numbers: optional extra line per stage (keys from RECAP_STAGES), for values the notebook computed,
             e.g. {"logits": "49,152 scores, -26.8 to 12.8"}; an unknown key raises ValueError.
    Returns the axes; each stage is one text box (its gid is the stage name) and each arrow one annotation.
    """
    import matplotlib.pyplot as plt

    numbers = dict(numbers or {})
    unknown = sorted(set(numbers) - set(RECAP_STAGES))
    if unknown:
        raise ValueError(f"plot_path_recap: unknown stage(s) {unknown}; use some of {list(RECAP_STAGES)}")
    if ax is None:
        _fig, ax = plt.subplots(figsize=(13, 6.2))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    stages = {  # name: (x, y, text, colour)
        "h": (0.07, 0.62, _("hidden vector h [d]\nthe last position,\nafter the final norm"), "#dbe9f6"),
        "head": (0.25, 0.62, "LM head\nlogits = h · Wᵀ\nW: [V, d]", "#dbe9f6"),
        "logits": (0.42, 0.62, _("logits [V]\nany real number,\none per token"), "#dbe9f6"),
        "softmax": (0.605, 0.62, _("softmax\n÷ T first,\nsubtract the max"), "#fde9c9"),
        "probabilities": (0.78, 0.62, _("probabilities [V]\nall > 0, sum to 1,\nlogits' order kept"), "#fde9c9"),
        "greedy": (0.92, 0.9, _("greedy: argmax\nsame token every time"), "#e4f2dc"),
        "sampling": (0.92, 0.3, _("sampling: T, top-k,\ntop-p, min-p cut the tail,\nthen one multinomial draw"),
                     "#e4f2dc"),
        "embedding": (0.25, 0.3, _("input embedding E [V, d]\nreads token i as row i"), "#ececec"),
        "tying": (0.6, 0.1, _("weight tying (W = E): three benefits\n"
                              "1. one V x d table instead of two: fewer parameters\n"
                              "2. every row gets gradient at every step, rare tokens too\n"
                              "    (cost: rare rows crowd into one direction)\n"
                              "3. one space to read and write: a token's score is e_i · h\n"
                              "needs one vocabulary and one width at both ends"), "#f3e1f1"),
    }
    boxes = {}
    for name, (x, y, text, colour) in stages.items():
        if name in numbers:
            text = f"{text}\n[{numbers[name]}]"
        boxes[name] = ax.text(x, y, text, ha="center", va="center", fontsize=9, linespacing=1.35,
                              multialignment="left" if name == "tying" else "center", gid=name,
                              bbox=dict(boxstyle="round,pad=0.5", facecolor=colour, edgecolor="#555555"))
    ax.figure.canvas.draw()  # box sizes are known only once drawn; arrows attach to the boxes' edges

    def link(a: str, b: str, start: tuple, end: tuple, text: str = "", **style) -> None:
        props = dict(arrowstyle="-|>", color="#333333", lw=1.3, shrinkA=6, shrinkB=6)
        ax.annotate(text, xy=end, xycoords=boxes[b], xytext=start, textcoords=boxes[a], fontsize=8,
                    ha="center", va="center", arrowprops={**props, **style})

    for a, b in [("h", "head"), ("head", "logits"), ("logits", "softmax"), ("softmax", "probabilities")]:
        link(a, b, (1, 0.5), (0, 0.5))
    link("probabilities", "greedy", (0.8, 1), (0.5, 0))
    link("probabilities", "sampling", (0.8, 0), (0.5, 1))
    link("embedding", "head", (0.5, 1), (0.5, 0), color="#8a3f86", ls="--")
    ax.text(0.26, 0.46, _("tied: the head uses E itself"), fontsize=8, color="#8a3f86", ha="left", va="center")
    link("tying", "embedding", (0, 0.5), (0.5, 0), arrowstyle="-", color="#8a3f86", ls=":")
    ax.set_title(_("From the last hidden vector to the next token (chapters 02-04)"), fontsize=11)
    return ax
