"""Where the reports go, checked before grading starts: a class can take minutes, and a report path that cannot be
written (a folder given for a file, a file for a folder, a place the teacher cannot write) would otherwise end the
run with a traceback after every student was graded."""
from __future__ import annotations

import os
from pathlib import Path

from ..i18n import _, verbatim
from .summary import summary_path
from .summary_page import page_path

FILES = {"gradebook": "grades.csv", "json": "report.json", "lms_csv": "grades-lms.csv",  # dest -> an example name
         "gradescope_package": "autograder.zip"}
COMMANDS = {"gradescope_package": "python judge.py gradescope-package"}  # a path that is a command's word, not a flag
PER_STUDENT = {"junit": "junit.xml", "gradescope": "results.json", "classroom": "classroom.json"}  # with --class:
# a folder of one file per student; for one folder: one file


def _flag(dest: str) -> str:
    return COMMANDS.get(dest) or "--" + dest.replace("_", "-")


def _nearest_existing(path: Path) -> Path:
    """`path` itself or its closest ancestor that exists (what creating `path` would write into)."""
    path = path.absolute()
    return next((p for p in (path, *path.parents) if p.exists()), Path(path.anchor))


def _not_writable(path: Path, folder: bool) -> Path | None:
    """The place that keeps `path` from being written, or None if it can be: a folder is made (or written into)
    where it is; a file is written, with files beside it (the gradebook's results and summary), in its folder."""
    if not folder and path.exists() and not os.access(path, os.W_OK):
        return path
    where = _nearest_existing(path if folder else path.absolute().parent)
    return None if os.access(where, os.W_OK | os.X_OK) else where


def unwritable(outputs: dict[str, str | None], per_student_folders: bool) -> str:
    """A message for the first report path that cannot be written, or ''. outputs: flag dest -> the path given
    (None: not asked for); per_student_folders: --class, where --junit, --gradescope and --classroom are folders."""
    folders = {"feedback", *(PER_STUDENT if per_student_folders else ())}
    for dest, value in outputs.items():
        if not value:
            continue
        try:
            refused = _refused(Path(value), dest, dest in folders)
        except OSError as exc:  # a folder on the way that this user may not even look into
            refused = _cannot_write(dest, value, exc.filename or value)
        if refused:
            return refused
    return _clash(outputs, per_student_folders)


def _written(dest: str, path: Path, klass: bool) -> list[Path]:
    """What the report `dest` at `path` writes: the gradebook also writes its summaries beside it (and, for a
    class, the results kept for re-grading: grading/class_run.py's results_path, a layer above this one)."""
    if dest != "gradebook":
        return [path]
    kept = [path.with_name(f"{path.stem}-results.json")] if klass else []
    return [path, summary_path(path), page_path(path), *kept]


def _clash(outputs: dict[str, str | None], klass: bool) -> str:
    """A message when two reports would write the same path (the second would replace the first), or ''."""
    seen: dict[str, str] = {}
    for dest, value in outputs.items():
        for path in _written(dest, Path(value).absolute(), klass) if value else ():
            key = os.path.normcase(os.path.normpath(path))
            if seen.get(key, dest) != dest:
                return _("{flag} and {other} would both write {path}, and one would replace the other: give each "
                         "its own path.", flag=_flag(seen[key]), other=_flag(dest), path=verbatim(path))
            seen[key] = dest
    return ""


def _refused(path: Path, dest: str, folder: bool) -> str:
    """Why `path` cannot take the report `dest` (a folder of them when `folder`), or ''; OSError where it cannot
    be looked at."""
    flag = _flag(dest)
    if folder and path.exists() and not path.is_dir():
        return _("{flag} {path} is a file, and it needs a folder (a report per student goes in it): give a "
                 "folder, new or existing.", flag=flag, path=verbatim(path))
    if not folder and path.is_dir():
        example = path / {**FILES, **PER_STUDENT}.get(dest, "report")
        return _("{flag} {path} is a folder, and it needs a file name: for example {flag} {example}.",
                 flag=flag, path=verbatim(path), example=verbatim(example))
    blocked = _not_writable(path, folder)
    return "" if blocked is None else _cannot_write(dest, path, blocked)


def _cannot_write(dest: str, path: object, blocked: object) -> str:
    return _("{flag} {path}: you cannot write to {blocked}. Give a path in a folder you can write to.",
             flag=_flag(dest), path=verbatim(path), blocked=verbatim(blocked))
