"""Which edition of the course a kernel runs: a notebook under notebooks/zh/ is the Chinese edition.

check() answers in that language and the web figures label themselves in it, with nothing in the (identical)
code cells of the two editions to say so.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

EDITIONS = ("en", "zh")
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
        parts = Path(place.replace("\\", "/")).parts if place else ()
        for i, part in enumerate(parts[:-1]):
            if part == "notebooks" and parts[i + 1] in EDITIONS:
                return parts[i + 1]
    return None
