"""The course's chapters: every check module under grading/checks/, and which chapters and exercises a target
('04', 'ch04', 'ch04_sampling', an exercise name, or nothing for all) selects."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from .model import Chapter, Exercise

CHECKS = Path(__file__).resolve().parent / "checks"


def chapter_number(target: str | int) -> str | None:
    """'04' for '4', '04', 'ch04' or 'CH4'; None when `target` is no chapter number (an exercise name)."""
    t = str(target).strip().lower().removeprefix("ch")
    return t.zfill(2) if t.isdigit() else None


def load_chapters() -> list[Chapter]:
    """Every check module's CHAPTER (grading/checks/chNN_*, a module or a package), in chapter order."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(CHECKS)]) if m.name[:2] == "ch" and m.name[2:4].isdigit())
    chapters = []
    for n in names:
        try:
            chapters.append(importlib.import_module(f"grading.checks.{n}").CHAPTER)
        except Exception as exc:
            raise SystemExit(f"The course's own checks in grading/checks/{n} fail to load ({type(exc).__name__}: "
                             f"{exc}). This is a bug in the course, not in your exercises: update your copy of the course.")
    return chapters


def find_chapter(chapters: list[Chapter], target: str | int) -> Chapter | None:
    """The chapter a number ('4', '04', 'ch04') or a module name ('ch04_sampling') names, else None."""
    number = chapter_number(target)
    return next((c for c in chapters if c.number == number or c.module == str(target)), None)


def select(chapters: list[Chapter], target: str | None) -> list[tuple[Chapter, list[Exercise]]]:
    """Chapters and exercises matching a chapter ('01', 'ch01', 'ch01_embeddings'), an exercise name, or everything."""
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
        raise SystemExit(f"No chapter or exercise called {target!r}. Exercises: {known}")
    return picked


def chapters_for(target: str | None) -> list[Chapter]:
    """The chapters `target` can select, importing only their check modules: a chapter by number or module name,
    an exercise by the chapter whose check files name it. Anything else (no target, a name no file holds) loads
    every chapter, so select() still answers with the full list of exercises."""
    modules = sorted(m.name for m in pkgutil.iter_modules([str(CHECKS)]) if m.name[:2] == "ch" and m.name[2:4].isdigit())
    if target:
        number = chapter_number(target)
        picked = [n for n in modules if n[2:4] == number or n == target]
        if not picked:
            quoted = (f'"{target}"', f"'{target}'")
            picked = [n for n in modules if any(q in p.read_text(encoding="utf-8") for q in quoted
                                                for p in _sources(CHECKS / n))]
        chapters = [importlib.import_module(f"grading.checks.{n}").CHAPTER for n in picked]
        if any(c.number == number or c.module == target or any(e.name == target for e in c.exercises)
               for c in chapters):
            return chapters
    return load_chapters()


def _sources(path: Path) -> list[Path]:
    return sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
