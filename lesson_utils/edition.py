"""Which edition of the course a kernel runs: a notebook under notebooks/zh/ is the Chinese edition.

check() answers in that language and the web figures label themselves in it, with nothing in the (identical)
code cells of the two editions to say so.

The course's own messages outside the judge (course.py's setup, the model's loading and its errors, the doctor)
are written `_("Converting {name} ...", name=x)`: the English text is the msgid of the gettext domain `course`
(grading/locale/<lang>/LC_MESSAGES/course.po, kept with python -m tools.messages), translated and filled at once.
Standard library only: course.py loads this file before the course's environment (and torch) exists.
"""
from __future__ import annotations

import gettext
import os
import re
from functools import lru_cache
from pathlib import Path, PurePosixPath

EDITIONS = ("en", "zh")
DOMAIN = "course"
LOCALE = Path(__file__).resolve().parent.parent / "grading" / "locale"
COURSE_NOTEBOOK = re.compile(r"\d\d[a-z]?_\w+\.ipynb")  # 01a_embedding_lookup.ipynb; never 01a_..._lookup-mine.ipynb


def course_notebooks(folder: Path) -> list[Path]:
    """The course's own notebooks in `folder`, in order: a learner's copy (`NN_name-mine.ipynb`, `Untitled.ipynb`)
    is theirs, never part of the course's checks."""
    return sorted(p for p in Path(folder).glob("*.ipynb") if COURSE_NOTEBOOK.fullmatch(p.name))


def notebook_language() -> str | None:
    """The language of the notebook this kernel runs: notebooks/<lang>/... (JupyterLab gives the kernel its
    notebook's path as JPY_SESSION_NAME, and ipykernel as `__session__`; a kernel starts in its notebook's folder),
    or None outside a translated notebook."""
    places = [os.environ.get("JPY_SESSION_NAME", "")]
    try:
        from IPython import get_ipython

        shell = get_ipython()
        places.append(str(shell.user_ns.get("__session__", "")) if shell is not None else "")
    except ImportError:
        pass
    places.append(os.getcwd())
    for place in places:
        parts = PurePosixPath(place.replace("\\", "/")).parts if place else ()
        for i, part in enumerate(parts[:-1]):
            if part == "notebooks" and parts[i + 1] in EDITIONS:
                return parts[i + 1]
    return None


def _code(value: str) -> str:
    """'zh_CN.UTF-8', 'zh-Hans', 'zh:en' -> 'zh'."""
    return value.split(":")[0].split(".")[0].split("_")[0].split("-")[0].lower()


def language(explicit: str | None = None) -> str:
    """The language the course speaks here, by the rule check() follows (grading/notebook.py check_language):
    `explicit`, else GRADING_LANG, else the notebook's edition (notebooks/zh/ -> "zh"), else the locale
    (LANGUAGE, LC_ALL, LC_MESSAGES, LANG), else English. An unknown `explicit` raises ValueError."""
    if explicit is not None and _code(explicit) not in EDITIONS:
        raise ValueError(f"unknown language {explicit!r}: choose one of {', '.join(EDITIONS)}")
    for value in (explicit, os.environ.get("GRADING_LANG")):
        if value and _code(value) in EDITIONS:
            return _code(value)
    edition = notebook_language()
    if edition:
        return edition
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value and _code(value) in EDITIONS:
            return _code(value)
    return "en"


@lru_cache(maxsize=None)
def _catalog(lang: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, LOCALE, languages=[lang], fallback=True)


def _(msgid: str, /, **kwargs: object) -> str:
    """`msgid` (an English `str.format` template) in the course's language (`language()`), filled with `kwargs`.
    A translation whose placeholders do not fit falls back to the English."""
    text = _catalog(language()).gettext(msgid)
    if not kwargs:
        return text
    try:
        return text.format(**kwargs)
    except (KeyError, IndexError, ValueError):
        return msgid.format(**kwargs)


def N_(msgid: str) -> str:
    """Mark a constant for extraction; `_(constant)` translates it where it is shown."""
    return msgid
