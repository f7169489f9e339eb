"""Running a chapter on Google Colab, where only the notebook is opened and nothing of the course is there.

Each notebook's second cell (tools/colab_cell.py writes it into both editions) does nothing outside Colab. On Colab
it installs the course wheel (these helpers, the judge and the exercise stubs) and the course model's wheel, both
pinned, then calls `prepare()`: your exercise files are copied next to the notebook, where you edit them, and
`check()` grades that copy.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .edition import _

EXERCISES_ENV = "COURSE_EXERCISES"  # the folder check() grades when it is set (grading/notebook.py)


def on_colab() -> bool:
    """Whether this kernel is Colab's (Colab imports google.colab before the first cell runs)."""
    return "google.colab" in sys.modules


def shipped_exercises() -> Path:
    """The exercise stubs inside the installed course package."""
    import exercises

    return Path(exercises.__file__).resolve().parent


def prepare(dest: str | Path | None = None) -> Path:
    """Copy the exercise stubs to `dest` (default ./exercises), never over a file you already have; make
    `from exercises import ...` and check() use that copy. Returns the folder."""
    folder = Path(dest or Path.cwd() / "exercises").resolve()
    source = shipped_exercises()
    folder.mkdir(parents=True, exist_ok=True)
    copied = []
    for stub in sorted(source.glob("*.py")):
        if not (folder / stub.name).exists():
            shutil.copyfile(stub, folder / stub.name)
            copied.append(stub.name)
    os.environ[EXERCISES_ENV] = str(folder)
    parent = str(folder.parent)
    if parent in sys.path:
        sys.path.remove(parent)
    sys.path.insert(0, parent)  # your copy, not the installed stubs, is the `exercises` package
    for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
        del sys.modules[name]
    kept = len(list(source.glob("*.py"))) - len(copied)
    print(_("Your exercise files: {folder} ({copied} copied, {kept} already there and kept). Open them from the "
            "file browser on the left; check() grades them.", folder=folder, copied=len(copied), kept=kept))
    return folder
