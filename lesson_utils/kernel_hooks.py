"""What importing lesson_utils changes in a notebook's kernel, and only there (never in a script or the tests).

- Every figure the inline backend shows carries in its output's metadata the summary of its data (figure_data.py)
  and the words its code wrote (figure_text.KEY: where tools/messages.py finds them to translate).
- In a translated edition (notebooks/zh/), those words are translated before the figure is drawn, and what the
  cells print goes through output_text.TranslatingStream, line by line.
"""
from __future__ import annotations

import sys

from . import edition, figure_data, figure_text, output_text


def _kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def install_figure_hook(lang: str) -> bool:
    """Wrap matplotlib_inline's per-figure metadata so each shown figure is translated (in `lang`), then records
    its data summary and words; True if installed (or already there)."""
    try:
        from matplotlib_inline import backend_inline
    except ImportError:
        return False
    original = backend_inline._fetch_figure_metadata
    if getattr(original, "_course_hook", False):
        return True

    def metadata(fig):
        out = dict(original(fig) or {})
        figure_text.translate_figure(fig, lang)
        out[figure_data.KEY] = figure_data.figure_summary(fig)
        words = [output_text.template(text.strip())[0] for text in figure_text.figure_words(fig)]
        if words:
            out[figure_text.KEY] = words
        return out

    metadata._course_hook = True
    backend_inline._fetch_figure_metadata = metadata
    return True


def install(lang: str | None = None) -> bool:
    """In an IPython kernel: the figure hook, and in a translated edition the stdout filter; False elsewhere."""
    if not _kernel():
        return False
    lang = lang or edition.language()
    install_figure_hook(lang)
    if lang != "en" and not isinstance(sys.stdout, output_text.TranslatingStream):
        sys.stdout = output_text.TranslatingStream(sys.stdout, lang)
    return True
