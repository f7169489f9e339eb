"""The class summary: per exercise how many passed, and the most common named mistakes and errors.

It tells a teacher what to re-teach; printed at the end of a class run and written next to the gradebook.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import dependencies, i18n
from ..i18n import _
from . import points
from .messages import error_label, mistakes
from ..model import NOT_ATTEMPTED, PASSED, ExerciseResult

TOP = 3  # mistakes and errors listed per exercise


@dataclass
class ExerciseSummary:
    """How a class did on one exercise."""

    chapter: str
    name: str
    max_points: float
    students: int = 0
    passed: int = 0
    not_attempted: int = 0
    points: float = 0.0  # summed over students
    mistakes: Counter = field(default_factory=Counter)  # named mistake -> students who made it
    errors: Counter = field(default_factory=Counter)  # error label -> students
    blocked: Counter = field(default_factory=Counter)  # failing function of their own it calls -> students

    @property
    def mean_points(self) -> float:
        return self.points / self.students if self.students else 0.0

    def as_dict(self) -> dict:
        """Plain JSON data."""
        return {"chapter": self.chapter, "name": self.name, "max_points": self.max_points,
                "students": self.students, "passed": self.passed, "not_attempted": self.not_attempted,
                "mean_points": round(self.mean_points, 2),
                "mistakes": [{"mistake": m, "students": n} for m, n in self.mistakes.most_common()],
                "errors": [{"error": e, "students": n} for e, n in self.errors.most_common()],
                "fails_through": [{"function": f, "students": n} for f, n in self.blocked.most_common()]}


def summarize(rows: dict[str, list[ExerciseResult]]) -> list[ExerciseSummary]:
    """One ExerciseSummary per exercise graded, in grading order."""
    out: dict[tuple[str, str], ExerciseSummary] = {}
    for student, results in rows.items():
        blocked = dependencies.blocking(results)
        for r in results:
            key = (r.chapter, r.name)
            s = points.score(r)
            e = out.setdefault(key, ExerciseSummary(r.chapter, r.name, s.max_points))
            e.students += 1
            e.points += s.points
            e.passed += r.status == PASSED
            e.not_attempted += r.status == NOT_ATTEMPTED
            for m, _ in mistakes(r):
                e.mistakes[m] += 1
            label = error_label(r)
            if label:
                e.errors[label] += 1
            for dep in blocked.get(key, []):
                e.blocked[dep] += 1
    return list(out.values())


def _students(k: int) -> str:
    return _("1 student") if k == 1 else _("{n} students", n=k)


def _short(text: str, n: int = 110) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def summary_lines(summaries: list[ExerciseSummary], lang: str | None = None) -> list[str]:
    """The summary as console lines in `lang` (grading/i18n.py): one line per exercise, then its commonest
    mistakes and errors."""
    if not summaries:
        return []
    n = max(s.students for s in summaries)
    lines = [_("Class summary ({n} students): passed / not attempted / mean points per exercise", n=n)]
    for s in summaries:
        lines.append(f"  {s.chapter} {s.name:<26} " + _("{passed:>3}/{students} passed  {not_attempted:>3} not attempted  "
                                                       "mean {mean}/{top} pts", passed=s.passed, students=s.students,
                                                       not_attempted=s.not_attempted, mean=points.fmt(s.mean_points),
                                                       top=points.fmt(s.max_points)))
        for m, k in s.mistakes.most_common(TOP):
            lines.append("        " + _("{k} x mistake: {mistake}", k=k, mistake=m))
        for e, k in s.errors.most_common(TOP):
            lines.append("        " + _("{k} x error: {error}", k=k, error=e))
        for f, k in s.blocked.most_common(TOP):
            lines.append("        " + _("{k} x fails because their own {function} fails", k=k, function=f))
    lang = i18n.language(lang)
    return [i18n.render(line, lang) for line in lines]


def to_markdown(summaries: list[ExerciseSummary], lang: str | None = None) -> str:
    """The summary as a Markdown document in `lang` (a table, then the mistakes and errors per exercise)."""
    n = max((s.students for s in summaries), default=0)
    out = ["# " + _("Class summary"), "", _("{n} students. What to re-teach: the exercises with few passes and the "
                                          "mistakes many students made.", n=n), "",
           "| " + _("chapter") + " | " + _("exercise") + " | " + _("passed") + " | " + _("not attempted") + " | "
           + _("mean points") + " |", "|---|---|---|---|---|"]
    for s in summaries:
        out.append(f"| {s.chapter} | {s.name} | {s.passed}/{s.students} | {s.not_attempted} | "
                   f"{points.fmt(s.mean_points)}/{points.fmt(s.max_points)} |")
    chapters: dict[str, list[float]] = {}
    for s in summaries:
        t = chapters.setdefault(s.chapter, [0.0, 0.0])
        t[0] += s.mean_points
        t[1] += s.max_points
    got, top = sum(p for p, _ in chapters.values()), sum(m for _, m in chapters.values())
    out += ["", "| " + _("chapter") + " | " + _("mean points") + " |", "|---|---|"]
    out += [f"| {c} | {points.fmt(p)}/{points.fmt(m)} |" for c, (p, m) in sorted(chapters.items())]
    out.append("| " + _("all") + f" | {points.fmt(got)}/{points.fmt(top)} |")
    for s in summaries:
        if not (s.mistakes or s.errors or s.blocked):
            continue
        out += ["", "## " + _("{name} (chapter {chapter})", name=s.name, chapter=s.chapter), ""]
        out += ["- " + _("{students}, mistake: {mistake}", students=_students(k), mistake=m)
                for m, k in s.mistakes.most_common()]
        out += ["- " + _("{students}, error: {error}", students=_students(k), error=e) for e, k in s.errors.most_common()]
        out += ["- " + _("{students} fail because their own `{function}` fails its checks", students=_students(k),
                         function=f) for f, k in s.blocked.most_common()]
    return i18n.render("\n".join(out) + "\n", i18n.language(lang))


def summary_path(gradebook: Path) -> Path:
    """Where the summary goes: next to the gradebook, grades.csv -> grades-summary.md."""
    return gradebook.with_name(f"{gradebook.stem}-summary.md")
