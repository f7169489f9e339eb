"""The text the course's figures draw: in the reader's language, in a font that has its characters.

The plotting helpers write their own labels as `_("probability")` with this module's `_`: lesson_utils/edition.py's
translation, except that a Chinese figure stays in English where no installed font has Chinese characters (matplotlib
would draw empty boxes). For Chinese, `use_cjk_font` puts an installed CJK font first in matplotlib's sans-serif list.
The words a notebook's own code writes on a figure (`ax.set_title("...")`) are translated as the figure is shown
(`translate_figure`, called by kernel_hooks.py, through the `outputs` catalog of lesson_utils/output_text.py).
"""
from __future__ import annotations

import re

from . import edition, output_text

CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei", "Microsoft YaHei",
             "PingFang SC", "Heiti SC", "SimHei")  # in order of preference
NEEDS_CJK = ("zh",)
FALLBACK = "DejaVu Sans"  # ships with matplotlib
_told = False  # the note that figures stay in English is printed once per kernel


def installed_fonts() -> set[str]:
    """The family names of the fonts matplotlib knows here."""
    from matplotlib import font_manager

    return {font.name for font in font_manager.fontManager.ttflist}


def cjk_font() -> str | None:
    """The first of CJK_FONTS that is installed, or None."""
    names = installed_fonts()
    return next((name for name in CJK_FONTS if name in names), None)


def use_cjk_font(lang: str | None = None) -> bool:
    """Make matplotlib able to draw `lang` (default: the course's language): for Chinese, put an installed CJK font
    first in rcParams["font.sans-serif"]. False when it cannot (Chinese, no CJK font): figures then stay in English."""
    if (lang or edition.language()) not in NEEDS_CJK:
        return True
    font = cjk_font()
    if font is None:
        _tell_once()
        return False
    import matplotlib

    fonts = list(matplotlib.rcParams["font.sans-serif"])
    if fonts[:1] != [font]:
        matplotlib.rcParams["font.sans-serif"] = [font] + [f for f in fonts if f != font]
    family = list(matplotlib.rcParams["font.family"])
    if FALLBACK not in family:  # a glyph the CJK font lacks (ᵀ, ∇) is drawn from matplotlib's own font
        matplotlib.rcParams["font.family"] = family + [FALLBACK]
    return True


def _tell_once() -> None:
    global _told
    if not _told:
        _told = True
        print(edition._("The figures are labelled in English: no font with Chinese characters is installed (for "
                        "example Noto Sans CJK SC, Source Han Sans SC or WenQuanYi Zen Hei)."))


def _(msgid: str, /, **kwargs: object) -> str:
    """`msgid` (an English `str.format` template) filled with `kwargs`, in the course's language where a font can
    draw it (`use_cjk_font`), else in English."""
    if use_cjk_font():
        return edition._(msgid, **kwargs)
    return msgid.format(**kwargs) if kwargs else msgid


KEY = "figure_text"  # output metadata: the texts a shown figure carries (tools/messages.py takes msgids from it)


def _has_words(text: str) -> bool:
    """Words outside quotes (tokens) and math ($10^{2}$: a number on a log axis)."""
    return bool(output_text.WORD.search(re.sub(r"\$[^$]*\$", "", output_text.QUOTED.sub("", text))))


def figure_strings(fig) -> list:
    """The Text artists of `fig` that carry words a notebook's code wrote: titles, axis labels (colour bars' too),
    legend entries and titles, texts and annotations (tick labels: `worded_axes`)."""
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            texts += [legend.get_title(), *legend.get_texts()]
    return [t for t in texts if _has_words(t.get_text())]


def worded_axes(fig) -> list:
    """The axes (x or y of each plot) whose tick labels carry words, such as a bar chart's categories; an axis of
    numbers or quoted tokens is not one."""
    return [axis for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            if any(_has_words(t.get_text()) for t in axis.get_majorticklabels())]


def figure_words(fig) -> list[str]:
    """Every worded text of `fig` (figure_strings, then worded tick labels), as written."""
    ticks = [t.get_text() for ax in fig.axes for axis in (ax.xaxis, ax.yaxis) for t in axis.get_majorticklabels()]
    return [t.get_text() for t in figure_strings(fig)] + [t for t in ticks if _has_words(t)]


def translate_figure(fig, lang: str | None = None) -> None:
    """Put `fig`'s words into `lang` (default: the course's language) where the `outputs` catalog has them and a
    font can draw them; the rest stays as it is. Tick labels are translated by their axis's formatter, which
    matplotlib asks again at every draw."""
    from matplotlib.ticker import FuncFormatter

    lang = lang or edition.language()
    if lang == "en" or not use_cjk_font(lang):
        return
    for text in figure_strings(fig):
        text.set_text(output_text.translate_cell(text.get_text(), lang))
    for axis in worded_axes(fig):
        label = axis.get_major_formatter()
        axis.set_major_formatter(FuncFormatter(lambda x, pos, label=label: output_text.translate_cell(
            label(x, pos), lang)))
