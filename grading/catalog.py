"""The course's chapters: every check module under grading/checks/, and which chapters and exercises a target
('04', 'ch04', 'ch04_sampling', an exercise name, or nothing for all) selects.

Library code: a bad target or a broken checks module raises CatalogError (its text names the problem and the fix);
judge.py and check() show that text, nothing here ends the process."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from . import i18n
from .i18n import _, verbatim
from .model import Chapter, Exercise

CHECKS = Path(__file__).resolve().parent / "checks"


class CatalogError(ValueError):
    """A target that names no chapter or exercise, or the course's own checks failing to load. `message` may be
    marked for translation (grading/i18n.py); str() shows it in the judge's language, render() in another."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def render(self, lang: str) -> str:
        return i18n.render(self.message, lang)

    def __str__(self) -> str:
        return i18n.show(self.message)


def chapter_number(target: str | int) -> str | None:
    """'04' for '4', '04', 'ch04' or 'CH4'; None when `target` is no chapter number (an exercise name)."""
    t = str(target).strip().lower().removeprefix("ch")
    return t.zfill(2) if t.isdigit() else None


def _check_calls(chapter: Chapter) -> None:
    """Every case names a call protocol that exists in grading/worker/calls/ (learner-side code lives there)."""
    from .worker.calls import PROTOCOLS  # torch: the checks loaded just before import it anyway

    for ex in chapter.exercises:
        for case in ex.cases:
            if case.call not in PROTOCOLS:
                raise TypeError(f"{ex.name}, case {case.name!r}: call= must name a protocol in grading/worker/calls/ "
                                f"({', '.join(PROTOCOLS)}), got {case.call!r}. Learner-side code lives there, never "
                                "in a chapter's checks (see grading/README.md).")


def _modules() -> list[str]:
    """The check modules' names (grading/checks/chNN_*, a module or a package), in chapter order."""
    return sorted(m.name for m in pkgutil.iter_modules([str(CHECKS)]) if m.name[:2] == "ch" and m.name[2:4].isdigit())


def _load(name: str) -> Chapter:
    """One check module's CHAPTER, its cases' protocols checked; CatalogError if it does not load."""
    try:
        chapter = importlib.import_module(f"grading.checks.{name}").CHAPTER
        _check_calls(chapter)
    except Exception as exc:
        raise CatalogError(f"The course's own checks in grading/checks/{name} fail to load ({type(exc).__name__}: "
                           f"{exc}). This is a bug in the course, not in your exercises: update your copy of the "
                           "course.") from exc
    return chapter


def load_chapters() -> list[Chapter]:
    """Every check module's CHAPTER, in chapter order."""
    return [_load(n) for n in _modules()]


def find_chapter(chapters: list[Chapter], target: str | int) -> Chapter | None:
    """The chapter a number ('4', '04', 'ch04') or a module name ('ch04_sampling') names, else None."""
    number = chapter_number(target)
    return next((c for c in chapters if c.number == number or c.module == str(target)), None)


def select(chapters: list[Chapter], target: str | None) -> list[tuple[Chapter, list[Exercise]]]:
    """Chapters and exercises matching a chapter ('01', 'ch01', 'ch01_embeddings'), an exercise name, or everything;
    CatalogError when nothing matches."""
    if not target:
        return [(c, list(c.exercises)) for c in chapters]
    number = chapter_number(target)
    picked = [(c, list(c.exercises)) for c in chapters if c.number == number or c.module == target]
    if picked:
        return picked
    picked = [(c, [e for e in c.exercises if e.name == target]) for c in chapters]
    picked = [(c, es) for c, es in picked if es]
    if not picked:
        known = ", ".join(e.name for c in chapters for e in c.exercises)
        raise CatalogError(_("No chapter or exercise called {name}. Exercises: {known}", name=verbatim(repr(target)),
                             known=verbatim(known)))
    return picked


def none_in(folder: Path, picked: list[tuple[Chapter, list[Exercise]]]) -> str:
    """The exercise files `picked` (select's) needs, as a short list for a message, when `folder` holds none of
    them (a wrong folder: every exercise would be "not attempted"); else ''."""
    files = [f"{chapter.module}.py" for chapter, _ex in picked]
    if any((Path(folder) / f).is_file() for f in files):
        return ""
    return ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")


def chapters_for(target: str | None) -> list[Chapter]:
    """The chapters `target` can select, importing only their check modules: a chapter by number or module name,
    an exercise by the chapter whose check files name it. Anything else (no target, a name no file holds) loads
    every chapter, so select() still answers with the full list of exercises."""
    modules = _modules()
    if target:
        number = chapter_number(target)
        picked = [n for n in modules if n[2:4] == number or n == target]
        if not picked:
            quoted = (f'"{target}"', f"'{target}'")
            picked = [n for n in modules if any(q in p.read_text(encoding="utf-8") for q in quoted
                                                for p in _sources(CHECKS / n))]
        chapters = [_load(n) for n in picked]
        if any(c.number == number or c.module == target or any(e.name == target for e in c.exercises)
               for c in chapters):
            return chapters
    return load_chapters()


def _sources(path: Path) -> list[Path]:
    return sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
