"""Turning grading results into console output, JSON, JUnit XML and a class gradebook, all with points."""
from __future__ import annotations

import csv
import json
import sys
import threading
from pathlib import Path
from typing import Callable
from xml.etree import ElementTree as ET

from .. import dependencies, i18n
from ..i18n import _
from . import points
from .messages import mistakes, shared_message
from ..model import NOT_ATTEMPTED, PASSED, ExerciseResult, status_text

COLORS = {"passed": "32", "wrong answer": "31", "error": "31", "timeout": "33", "not attempted": "90"}


def _marks() -> tuple[str, str]:
    enc = (getattr(sys.stdout, "encoding", None) or "ascii").lower()
    return ("✓", "✗") if "utf" in enc else ("+", "x")


def _color(text: str, status: str) -> str:
    if not sys.stdout.isatty():
        return text
    return f"\033[{COLORS.get(status, '0')}m{text}\033[0m"


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())


class ConsolePrinter:
    """Prints each exercise as its result arrives (callable as the scheduler's `on_result`), then the totals.

    A message every case shares (an import error, a timeout) is printed once, and once per chapter when several
    exercises share it; each named mistake is printed once per exercise with the number of cases it explains, and
    a failure that comes from another of the learner's own functions says so (ExerciseResult.fails_through).
    verbose=False (-q): one line per exercise. write: where lines go (print by default). lang: the language of what
    it prints (grading/i18n.py; None: GRADING_LANG or the locale).
    """

    def __init__(self, titles: dict[str, str], verbose: bool = True, write: Callable[[str], None] = print,
                 lang: str | None = None):
        self.titles, self.verbose, self.lang = titles, verbose, i18n.language(lang)
        self.write = lambda text: write(i18n.render(text, self.lang))
        self._chapter: str | None = None
        self._shown: dict[tuple[str, str], str] = {}  # (chapter, shared message) -> first exercise that had it
        self._lock = threading.Lock()

    def __call__(self, r: ExerciseResult) -> None:
        with self._lock:
            self.write("\n".join(self.lines(r)))

    def lines(self, r: ExerciseResult) -> list[str]:
        """The lines printed for one result."""
        s = points.score(r)
        n_ok = sum(c.passed for c in r.cases)
        status = i18n.render(status_text(r.status), self.lang)
        head = f"{r.name:<26} {_color(_pad(status, 14), r.status)} " + _("{ok}/{n} cases  {points}/{top} pts",
                                                                          ok=n_ok, n=len(r.cases),
                                                                          points=points.fmt(s.points),
                                                                          top=points.fmt(s.max_points))
        if not self.verbose:
            return [f"  {r.chapter} {head}"]
        out = []
        if r.chapter != self._chapter:
            self._chapter = r.chapter
            out.append("\n" + _("Chapter {chapter}: {title}", chapter=r.chapter, title=self.titles.get(r.chapter, "")))
        out.append(f"  {head}")
        ok, bad = _marks()
        shared = shared_message(r)
        if r.status == NOT_ATTEMPTED:
            text = i18n.render(shared or (r.cases[0].message if r.cases else r.message), self.lang)
            out.append(f"      {(text.splitlines() or [''])[0]}")
        elif shared is not None:
            first = self._shown.setdefault((r.chapter, shared), r.name)
            if first == r.name:
                out += [f"    {bad} " + _("every case failed with:"), _indent(i18n.render(shared, self.lang), 8)]
            else:
                out.append(f"    {bad} " + _("every case failed with the same error as {first} above", first=first))
        else:
            for c in r.cases:
                out.append(f"    {ok if c.passed else bad} {_pad(i18n.render(c.name, self.lang), 44)} "
                           f"{c.seconds * 1000:8.1f} ms")
                if not c.passed:
                    out.append(_indent(i18n.render(c.message, self.lang), 8))
            for text, n in mistakes(r):
                failed = sum(not c.passed for c in r.cases)
                out.append("      " + _("Likely mistake ({n} of {failed} failing cases): {mistake}", n=n, failed=failed,
                                        mistake=text))
        note = dependencies.note(r)
        if note:
            out.append("      " + _("Note: {note}", note=note))
        return out

    def totals(self, results: list[ExerciseResult]) -> None:
        """Points per chapter and for everything graded, then the exercise count."""
        sc = points.scores(results)
        per = points.chapter_totals(sc)
        if len(per) > 1:
            self.write("\n" + _("Points per chapter: {points}", points=", ".join(
                f"{c}: {points.fmt(p)}/{points.fmt(m)}" for c, (p, m) in per.items())))
        got, top = points.total(sc)
        self.write("\n" + _("Score: {passed}/{n} exercises passed, {points}/{top} points.",
                            passed=sum(r.passed for r in results), n=len(results), points=points.fmt(got),
                            top=points.fmt(top)))


def _pad(text: str, width: int) -> str:
    """`text` padded to `width` columns on a console (a Chinese character takes two)."""
    import unicodedata

    cols = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(0, width - cols)


def isolation_of(results: list[ExerciseResult]) -> str:
    """Which sandbox the learner's code ran in, for every report ("bubblewrap", "audit hooks", or both)."""
    kinds = sorted({r.isolation for r in results if r.isolation})
    return " + ".join(kinds) if kinds else "none (nothing was run)"


def exercise_record(r: ExerciseResult, note: str = "") -> dict:
    """Everything known about one result, as plain JSON data: status, points, every case's full message."""
    s = points.score(r)
    return {
        "chapter": r.chapter, "name": r.name, "status": r.status, "points": s.points, "max_points": s.max_points,
        "message": shared_message(r) or "", "mistakes": [m for m, _ in mistakes(r)], "note": note,
        "cases": [{"name": c.name, "passed": c.passed, "seconds": round(c.seconds, 4), "message": c.full_message,
                   "mistake": c.mistake} for c in r.cases],
    }


def results_record(results: list[ExerciseResult], notes: dict | None = None) -> dict:
    """One learner's results with totals per chapter and overall; `notes`: dependencies.notes_for, when the caller
    has them already."""
    if notes is None:
        notes = dependencies.notes_for(results)
    sc = points.scores(results)
    got, top = points.total(sc)
    return {
        "passed": sum(r.passed for r in results), "total": len(results), "points": got, "max_points": top,
        "isolation": isolation_of(results),
        "chapters": {c: {"points": p, "max_points": m} for c, (p, m) in points.chapter_totals(sc).items()},
        "exercises": [exercise_record(r, notes.get((r.chapter, r.name), "")) for r in results],
    }


def to_json(results: list[ExerciseResult], path: Path, folder: str, notes: dict | None = None,
            lang: str | None = None) -> None:
    """A JSON report of one learner's results (keys and statuses stable; messages in `lang`)."""
    data = i18n.render_all({"source": folder, **results_record(results, notes)}, i18n.language(lang))  # the graded
    # folder, under the key teachers' tools already read
    Path(path).write_text(json.dumps(data, indent=2), encoding="utf-8")


def class_to_json(rows: dict[str, list[ExerciseResult]], path: Path,
                  notes: dict[str, dict] | None = None, summaries: list | None = None, lang: str | None = None) -> None:
    """A JSON report of a whole class: per student the full record (messages, mistakes, points), and the summary.
    `notes` (dependencies.notes_by_student) and `summaries` (summary.summarize), when the caller has them."""
    from .summary import summarize

    notes = notes or {}
    summaries = summaries if summaries is not None else summarize(rows)
    data = {"students": {name: results_record(rs, notes.get(name)) for name, rs in rows.items()},
            "summary": [s.as_dict() for s in summaries]}
    Path(path).write_text(json.dumps(i18n.render_all(data, i18n.language(lang)), indent=2), encoding="utf-8")


def to_junit(results: list[ExerciseResult], path: Path, suite_name: str = "judge", lang: str | None = None) -> None:
    """JUnit XML: a suite per chapter, a test case per check case, points as suite properties (names and
    messages in `lang`, statuses stable)."""
    lang = i18n.language(lang)
    root = ET.Element("testsuites", name=suite_name)
    by_chapter: dict[str, list[ExerciseResult]] = {}
    for r in results:
        by_chapter.setdefault(r.chapter, []).append(r)
    got, top = points.total(points.scores(results))
    root.set("isolation", isolation_of(results))
    root.set("points", points.fmt(got))
    root.set("max_points", points.fmt(top))
    for chapter, rs in by_chapter.items():
        cases = [(r, c) for r in rs for c in r.cases]
        suite = ET.SubElement(root, "testsuite", name=f"{suite_name}.ch{chapter}", tests=str(len(cases)),
                              failures=str(sum(not c.passed for _, c in cases)))
        props = ET.SubElement(suite, "properties")
        p, m = points.total(points.scores(rs))
        ET.SubElement(props, "property", name="points", value=points.fmt(p))
        ET.SubElement(props, "property", name="max_points", value=points.fmt(m))
        for r, c in cases:
            tc = ET.SubElement(suite, "testcase", classname=f"ch{chapter}.{r.name}", name=i18n.render(c.name, lang),
                               time=f"{c.seconds:.4f}")
            if not c.passed:
                tag = "skipped" if r.status == NOT_ATTEMPTED else "failure"
                ET.SubElement(tc, tag, message=r.status).text = i18n.render(c.full_message, lang)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def exercise_names(rows: dict[str, list[ExerciseResult]]) -> list[tuple[str, str]]:
    """(chapter, exercise) of every exercise graded for anyone, in grading order."""
    names: list[tuple[str, str]] = []
    for results in rows.values():
        for r in results:
            if (r.chapter, r.name) not in names:
                names.append((r.chapter, r.name))
    return names


def write_gradebook(rows: dict[str, list[ExerciseResult]], path: Path) -> None:
    """One row per student: per exercise 1/0 (passed or not) and its points, points per chapter, then totals.

    Points columns say their maximum in their name ("lookup points (max 3)"), so that every row is a student.
    """
    names = exercise_names(rows)
    chapters = sorted({c for c, _ in names})
    maxima = {(r.chapter, r.name): r.max_points for results in rows.values() for r in results}
    ch_max = {c: sum(m for (cc, _), m in maxima.items() if cc == c) for c in chapters}
    top = sum(maxima.values())
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *(n for _, n in names), *(f"{n} points (max {points.fmt(maxima[(c, n)])})" for c, n in names),
                    *(f"ch{c} points (max {points.fmt(ch_max[c])})" for c in chapters),
                    "passed", "total", "points", "max_points", "percent", "isolation"])
        for student, results in rows.items():
            by = {(r.chapter, r.name): points.score(r) for r in results}
            passed = [1 if k in by and by[k].status == PASSED else 0 for k in names]
            earned = [by[k].points if k in by else 0.0 for k in names]
            per = {c: sum(e for (cc, _), e in zip(names, earned) if cc == c) for c in chapters}
            got = sum(earned)
            w.writerow([student, *passed, *(points.fmt(e) for e in earned), *(points.fmt(per[c]) for c in chapters),
                        sum(passed), len(names), points.fmt(got), points.fmt(top), f"{100 * got / top if top else 0:.1f}",
                        isolation_of(results)])


def progress_lines(results: list[ExerciseResult], chapters: list) -> list[str]:
    """Per chapter: how many exercises pass, and which are left (what `judge.py progress` prints); marked lines,
    rendered by the caller (grading/i18n.py)."""
    by_name = {(r.chapter, r.name): r for r in results}
    lines, total, done = [], 0, 0
    for c in chapters:
        mine = [by_name[(c.number, e.name)] for e in c.exercises if (c.number, e.name) in by_name]
        if not mine:
            continue
        ok = [r for r in mine if r.passed]
        total, done = total + len(mine), done + len(ok)
        left = [f"{r.name} (" + status_text(r.status) + ")" for r in mine if not r.passed]
        lines.append(_("Chapter {chapter} {title}: {ok}/{n} done", chapter=c.number, title=c.title, ok=len(ok),
                       n=len(mine)) + ("; " + _("left: {exercises}", exercises=", ".join(left)) if left else " ✓"))
    lines.append(_("Course: {done}/{total} exercises done.", done=done, total=total))
    return lines
