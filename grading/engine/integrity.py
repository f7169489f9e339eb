"""The judge checks its own files around a class: learner code that got past every wall and rewrote them (a check
that passes everything, a judge that fails every classmate) must not grade this class or the next one.

Watched: judge.py, grading/ (the checks, the worker, the catalogs) and solutions/ where present. `snapshot()` is
taken before the first learner process starts and compared after the last one ends; the snapshot of a class that
ended clean is kept next to its results, and the next class on that gradebook starts only if nothing changed in
between (a process left behind by native code could still write). A change fails closed, naming the files.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..i18n import _

REPO = Path(__file__).resolve().parents[2]
WATCHED = ("judge.py", "grading", "solutions")
SKIPPED = ("__pycache__",)  # written by Python itself, never read back by the judge (PYTHONDONTWRITEBYTECODE aside)


class Tampered(RuntimeError):
    """The judge's own files changed while (or since) it graded learner code."""


def snapshot(repo: Path = REPO) -> dict[str, str]:
    """Every watched file (relative POSIX path) -> its SHA-256."""
    out = {}
    for top in WATCHED:
        root = repo / top
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink())
        for path in files:
            rel = path.relative_to(repo)
            if any(part in SKIPPED for part in rel.parts):
                continue
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:  # a dangling link or an unreadable file: a change all the same
                digest = "unreadable"
            out[rel.as_posix()] = digest
    return out


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files added, removed or rewritten between two snapshots, sorted."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def verify(before: dict[str, str], repo: Path = REPO) -> dict[str, str]:
    """Raise Tampered naming what changed since `before`; the snapshot now, if nothing did."""
    now = snapshot(repo)
    names = changed(before, now)
    if names:
        shown = ", ".join(names[:20]) + (f" (+{len(names) - 20})" if len(names) > 20 else "")
        raise Tampered(_("The judge's own files changed while it graded learner code: {files}. No grades were "
                         "written. Restore them (for example `git checkout -- grading judge.py solutions`), grade "
                         "the class inside an OS sandbox, and look at the submissions graded in this run.",
                         files=shown))
    return now


def manifest_path(state: Path) -> Path:
    """Where the snapshot of the last clean class on this gradebook is kept (next to its results file)."""
    return state.with_name(state.stem + "-judge-files.json")


def check_since_last_class(state: Path, repo: Path = REPO) -> dict[str, str]:
    """The snapshot now, after checking it against the one the last class on this gradebook ended with."""
    path = manifest_path(state)
    now = snapshot(repo)
    try:
        last = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return now  # no earlier class here (or an unreadable record): nothing to compare with
    names = changed(last, now) if isinstance(last, dict) else ["(unreadable record)"]
    if names:
        shown = ", ".join(names[:20]) + (f" (+{len(names) - 20})" if len(names) > 20 else "")
        raise Tampered(_("The judge's own files changed since the last class was graded into this gradebook: "
                         "{files}. If you changed them yourself (an update of the course), delete {record} and run "
                         "again; if not, restore them (for example `git checkout -- grading judge.py solutions`).",
                         files=shown, record=str(path)))
    return now


def record(state: Path, files: dict[str, str]) -> None:
    """Keep the snapshot of a class that ended clean, for the next class on this gradebook."""
    manifest_path(state).write_text(json.dumps(files, indent=0, sort_keys=True), encoding="utf-8")
