"""Points: what each exercise is worth (declared with its checks) and what a result earns.

A coding exercise is all or nothing unless its checks set `partial_credit=True`; a quiz gives each
question its own points. Totals are kept per chapter and for the whole course.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from ..catalog import load_chapters
from ..model import Chapter, Exercise, ExerciseResult

DEFAULT_POINTS = Exercise.__dataclass_fields__["points"].default  # for a result whose exercise is unknown


@dataclass(frozen=True)
class Score:
    """The points one exercise result earned, out of its maximum."""

    chapter: str
    name: str
    status: str
    points: float
    max_points: float


@lru_cache(maxsize=1)
def _catalog() -> dict[tuple[str, str], Exercise]:
    return catalog(load_chapters())


def catalog(chapters: Iterable[Chapter]) -> dict[tuple[str, str], Exercise]:
    """(chapter number, exercise name) -> the exercise's definition."""
    return {(c.number, e.name): e for c in chapters for e in c.exercises}


def exercise(chapter: str, name: str) -> Exercise | None:
    """The course's definition of an exercise, or None when the course has no such exercise."""
    return _catalog().get((chapter, name))


def max_points(ex: Exercise) -> float:
    """What the exercise is worth."""
    return float(ex.points)


def score(result: ExerciseResult, ex: Exercise | None = None) -> Score:
    """The points `result` earns: all or nothing, or shared by case weights when the exercise gives partial credit."""
    ex = ex or exercise(result.chapter, result.name)
    if ex is None:
        return Score(result.chapter, result.name, result.status, DEFAULT_POINTS if result.passed else 0.0, DEFAULT_POINTS)
    top = max_points(ex)
    if result.passed:
        earned = top
    elif ex.partial_credit and ex.cases:
        from .. import i18n  # results carry case names marked or rendered in any language

        weight = {name: c.points for c in ex.cases  # the exercise's own cases decide the shares
                  for name in (c.name, *(i18n.render(c.name, lang) for lang in i18n.LANGUAGES))}
        total = sum(c.points for c in ex.cases)
        got = sum(weight.get(c.name, 0.0) for c in result.cases if c.passed)
        earned = top * got / total if total else 0.0
    else:
        earned = 0.0
    return Score(result.chapter, result.name, result.status, round(earned, 2), top)


def scores(results: Iterable[ExerciseResult]) -> list[Score]:
    """One Score per result, in the same order."""
    return [score(r) for r in results]


def chapter_totals(items: Iterable[Score]) -> dict[str, tuple[float, float]]:
    """Chapter number -> (points earned, points possible), in chapter order."""
    totals: dict[str, list[float]] = {}
    for s in items:
        t = totals.setdefault(s.chapter, [0.0, 0.0])
        t[0] += s.points
        t[1] += s.max_points
    return {c: (round(p, 2), round(m, 2)) for c, (p, m) in sorted(totals.items())}


def total(items: Iterable[Score]) -> tuple[float, float]:
    """(points earned, points possible) over all the scores."""
    items = list(items)
    return round(sum(s.points for s in items), 2), round(sum(s.max_points for s in items), 2)


def course_max_points() -> float:
    """Points possible for the whole course."""
    return round(sum(max_points(e) for e in _catalog().values()), 2)


def fmt(value: float) -> str:
    """3.0 -> '3', 2.5 -> '2.5', 1.3333 -> '1.33'."""
    return f"{value:.2f}".rstrip("0").rstrip(".")
