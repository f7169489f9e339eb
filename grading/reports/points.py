"""Points: what each result earned out of its maximum, per chapter and in total.

The engine writes both numbers into each result (ExerciseResult.points and .max_points, grading/engine/checker.py;
the rule is grading/model.py's score: a coding exercise is all or nothing unless its checks set
`partial_credit=True`, a quiz gives each question its own points). Nothing here loads the course's checks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..model import Exercise, ExerciseResult
from ..model import score as earned


@dataclass(frozen=True)
class Score:
    """The points one exercise result earned, out of its maximum."""

    chapter: str
    name: str
    status: str
    points: float
    max_points: float


def max_points(ex: Exercise) -> float:
    """What the exercise is worth."""
    return float(ex.points)


def score(result: ExerciseResult, ex: Exercise | None = None) -> Score:
    """The points `result` earned, as its record says; given `ex` (its definition), computed from that instead."""
    if ex is not None:
        return Score(result.chapter, result.name, result.status,
                     earned(ex, [c.passed for c in result.cases], result.passed), max_points(ex))
    return Score(result.chapter, result.name, result.status, result.points, result.max_points)


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


def fmt(value: float) -> str:
    """3.0 -> '3', 2.5 -> '2.5', 1.3333 -> '1.33'."""
    return f"{value:.2f}".rstrip("0").rstrip(".")
