"""Results in the formats teachers' tools read: Gradescope's results.json, GitHub Classroom's runner result,
and a grade CSV that Canvas and Moodle import."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from .. import dependencies, i18n
from ..i18n import _
from . import feedback, points
from ..model import ERROR, TIMEOUT, ExerciseResult

DEFAULT_ASSIGNMENT = "LLM course: hidden state to next token"


def _test_name(r: ExerciseResult) -> str:
    return f"{r.chapter} {r.name}" + (f": {r.summary}" if r.summary else "")


def _feedback_text(r: ExerciseResult, note: str, lang: str | None) -> str:
    return feedback.to_markdown(feedback.exercise_blocks(r, note)[1:], lang) if not r.passed else _("Passed.")


def gradescope_results(results: list[ExerciseResult], seconds: float, error: str = "", notes: dict | None = None,
                       lang: str | None = None) -> dict:
    """Gradescope's results.json: top-level score, execution_time, output; a test per exercise with name,
    number, score, max_score, status (passed/failed), output and visibility. `error`: grading itself failed.
    What students read is in `lang` (grading/i18n.py); keys and statuses stay as Gradescope reads them."""
    if notes is None:
        notes = dependencies.notes_for(results)
    sc = points.scores(results)
    got, top = points.total(sc)
    per = points.chapter_totals(sc)
    summary = (_("{points} / {top} points; {passed} of {n} exercises passed.", points=points.fmt(got),
                 top=points.fmt(top), passed=sum(r.passed for r in results), n=len(results)) + "\n\n"
               + "\n".join("- " + _("chapter {chapter}: {points} / {top} points", chapter=c, points=points.fmt(p),
                                    top=points.fmt(m)) for c, (p, m) in per.items()))
    if error:
        summary = _("The autograder could not grade this submission:") + f"\n\n```text\n{error}\n```\n"
    tests = []
    for i, (r, s) in enumerate(zip(results, sc), 1):
        tests.append({
            "name": _test_name(r), "number": f"{r.chapter}.{i}", "score": s.points, "max_score": s.max_points,
            "status": "passed" if r.passed else "failed", "output": _feedback_text(r, notes.get((r.chapter, r.name), ""), lang),
            "visibility": "visible",
        })
    return i18n.render_all({"score": got, "execution_time": int(round(seconds)), "output": summary,
                            "output_format": "md", "test_output_format": "md", "visibility": "visible",
                            "stdout_visibility": "hidden", "tests": tests}, i18n.language(lang))


def write_gradescope(results: list[ExerciseResult], path: Path, seconds: float, error: str = "",
                     notes: dict | None = None, lang: str | None = None) -> None:
    """Write gradescope_results to `path` (its folder is created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(gradescope_results(results, seconds, error, notes, lang), indent=2),
                          encoding="utf-8")


def classroom_results(results: list[ExerciseResult], seconds: float = 0.0,
                      error: str = "", notes: dict | None = None, lang: str | None = None) -> dict:
    """The GitHub Classroom runner result the autograding reporter reads (base64-encoded, from <RUNNER>_RESULTS):
    version 1, status pass/fail/error, max_score, and a test per exercise with name, status, score, message."""
    if notes is None:
        notes = dependencies.notes_for(results)
    sc = points.scores(results)
    tests = []
    for r, s in zip(results, sc):
        status = "pass" if r.passed else ("error" if r.status in (ERROR, TIMEOUT) else "fail")
        tests.append({"name": _test_name(r), "status": status, "score": s.points,
                      "message": _feedback_text(r, notes.get((r.chapter, r.name), ""), lang), "line_no": 0,
                      "execution_time": f"{sum(c.seconds for c in r.cases):.2f}s"})
    if error or not results:
        overall = "error"
    else:
        overall = "pass" if all(r.passed for r in results) else "fail"
    return i18n.render_all({"version": 1, "status": overall, "max_score": points.total(sc)[1], "tests": tests,
                            **({"message": error} if error else {})}, i18n.language(lang))


def write_classroom(results: list[ExerciseResult], path: Path, error: str = "",
                    notes: dict | None = None, lang: str | None = None) -> None:
    """Write classroom_results to `path`."""
    Path(path).write_text(json.dumps(classroom_results(results, error=error, notes=notes, lang=lang),
                                     indent=2),
                          encoding="utf-8")


LMS_FORMATS = ("canvas", "moodle")


def write_lms_csv(rows: dict[str, list[ExerciseResult]], path: Path, fmt: str = "canvas",
                  assignment: str = DEFAULT_ASSIGNMENT) -> None:
    """A grade import CSV with one assignment column: each student's identifier (their folder name), points and
    the maximum.

    canvas: Canvas's gradebook columns (Student, ID, SIS User ID, SIS Login ID, Section, the assignment) with its
        'Points Possible' row; the folder name goes into Student and SIS Login ID, which Canvas matches on.
    moodle: identifier, the assignment's points, maximum; in Moodle's CSV import map 'identifier' to username
        (or email, whatever the folders are named by) and the assignment column to the grade item.
    """
    if fmt not in LMS_FORMATS:
        raise ValueError(f"unknown LMS format {fmt!r}; use one of {', '.join(LMS_FORMATS)}")
    totals = {name: points.total(points.scores(rs)) for name, rs in rows.items()}
    top = max((m for _, m in totals.values()), default=0.0)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if fmt == "canvas":
            w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
            w.writerow(["Points Possible", "", "", "", "", points.fmt(top)])
            for name, (got, _top) in totals.items():
                w.writerow([name, "", "", name, "", points.fmt(got)])
        else:
            w.writerow(["identifier", assignment, "maximum"])
            for name, (got, _top) in totals.items():
                w.writerow([name, points.fmt(got), points.fmt(top)])
