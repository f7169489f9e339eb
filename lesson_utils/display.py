"""Small display helpers shared by the notebooks: token labels, tables, token bar charts."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from . import edition, output_text
from .figure_text import _

COURSE_ROOT = Path(__file__).resolve().parent.parent


def short_path(path: str | Path) -> str:
    """A path as a learner should see it: relative to the course folder, or under ~, never a machine path."""
    p = Path(path).expanduser().absolute()
    for base, prefix in ((COURSE_ROOT, ""), (Path.home().absolute(), "~/")):
        try:
            return prefix + p.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def token_label(tokenizer, token_id: int) -> str:
    """A readable label for one token: its text in quotes, with a leading space shown as '␣'."""
    text = tokenizer.decode([int(token_id)])
    return repr(text.replace(" ", "␣"))[1:-1].join("''")


def print_table(rows: Sequence[Sequence], headers: Sequence[str]) -> None:
    """Print rows as an aligned plain-text table (stable text, so nbval can compare it); in a translated edition its
    headers and words are translated cell by cell (output_text), and columns align by display width."""
    lang = edition.language()
    cells = [[output_text.translate_cell(str(c), lang) for c in r] for r in [headers, *rows]]
    widths = [max(output_text.display_width(r[i]) for r in cells) for i in range(len(headers))]
    for n, r in enumerate(cells):
        print("  ".join(_pad(c, w, right=bool(n) and _numeric(c)) for c, w in zip(r, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _pad(text: str, width: int, right: bool) -> str:
    fill = " " * (width - output_text.display_width(text))
    return fill + text if right else text + fill


def _numeric(text: str) -> bool:
    try:
        float(text.replace(",", "").rstrip("%"))
        return True
    except ValueError:
        return False


def plot_token_bars(labels: Sequence[str], values: Sequence[float], highlight: int | None = None,
                    title: str = "", xlabel: str | None = None, ax=None):
    """Horizontal bar chart of tokens (largest at the top), one bar optionally highlighted; `xlabel` defaults to
    "probability" in the course's language."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(7, 0.35 * len(labels) + 1.2))
    colors = ["tab:orange" if i == highlight else "tab:blue" for i in range(len(labels))]
    y = list(range(len(labels)))[::-1]
    ax.barh(y, values, color=colors)
    ax.set_yticks(y, labels)
    ax.set_xlabel(_("probability") if xlabel is None else xlabel)
    if title:
        ax.set_title(title)
    for yi, v in zip(y, values):
        ax.text(v, yi, f" {v:.3g}", va="center", fontsize=8)
    ax.margins(x=0.15)
    return ax
