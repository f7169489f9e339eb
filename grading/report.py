"""Turning grading results into console output, JSON, JUnit XML and a class gradebook."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

from .runner import PASSED, ExerciseResult

COLORS = {"passed": "32", "wrong answer": "31", "error": "31", "timeout": "33", "not attempted": "90"}


def _marks() -> tuple[str, str]:
    enc = (getattr(sys.stdout, "encoding", None) or "ascii").lower()
    return ("✓", "✗") if "utf" in enc else ("+", "x")


def _color(text: str, status: str) -> str:
    if not sys.stdout.isatty():
        return text
    return f"\033[{COLORS.get(status, '0')}m{text}\033[0m"


def print_results(results: list[ExerciseResult], titles: dict[str, str], verbose: bool = True) -> None:
    """Print per-exercise status and per-case marks, with feedback for what failed."""
    ok, bad = _marks()
    chapter = None
    for r in results:
        if r.chapter != chapter:
            chapter = r.chapter
            print(f"\nChapter {chapter}: {titles.get(chapter, '')}")
        n_ok = sum(c.passed for c in r.cases)
        print(f"  {r.name:<26} {_color(r.status, r.status):<14} {n_ok}/{len(r.cases)} cases")
        if r.status == "not attempted" and not verbose:
            continue
        if r.status == "not attempted":
            print(f"      {r.cases[0].message if r.cases else r.message}")
            continue
        for c in r.cases:
            mark = ok if c.passed else bad
            print(f"    {mark} {c.name:<44} {c.seconds * 1000:8.1f} ms")
            if not c.passed and verbose:
                for line in c.message.splitlines():
                    print(f"        {line}")
    total = len(results)
    passed = sum(r.passed for r in results)
    print(f"\nScore: {passed}/{total} exercises passed.")


def to_json(results: list[ExerciseResult], path: Path, source: str) -> None:
    data = {
        "source": source,
        "passed": sum(r.passed for r in results),
        "total": len(results),
        "exercises": [
            {"chapter": r.chapter, "name": r.name, "status": r.status,
             "cases": [{"name": c.name, "passed": c.passed, "seconds": round(c.seconds, 4), "message": c.message}
                       for c in r.cases]}
            for r in results
        ],
    }
    Path(path).write_text(json.dumps(data, indent=2), encoding="utf-8")


def to_junit(results: list[ExerciseResult], path: Path, suite_name: str = "judge") -> None:
    root = ET.Element("testsuites", name=suite_name)
    by_chapter: dict[str, list[ExerciseResult]] = {}
    for r in results:
        by_chapter.setdefault(r.chapter, []).append(r)
    for chapter, rs in by_chapter.items():
        cases = [(r, c) for r in rs for c in r.cases]
        suite = ET.SubElement(root, "testsuite", name=f"{suite_name}.ch{chapter}", tests=str(len(cases)),
                              failures=str(sum(not c.passed for _, c in cases)))
        for r, c in cases:
            tc = ET.SubElement(suite, "testcase", classname=f"ch{chapter}.{r.name}", name=c.name, time=f"{c.seconds:.4f}")
            if not c.passed:
                tag = "skipped" if r.status == "not attempted" else "failure"
                ET.SubElement(tc, tag, message=r.status).text = c.message
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def write_gradebook(rows: dict[str, list[ExerciseResult]], path: Path) -> None:
    """One row per student, one column per exercise (1 passed, 0 not), then totals."""
    names = []
    for results in rows.values():
        for r in results:
            if r.name not in names:
                names.append(r.name)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["student", *names, "passed", "total", "percent"])
        for student, results in rows.items():
            status = {r.name: r.status for r in results}
            points = [1 if status.get(n) == PASSED else 0 for n in names]
            w.writerow([student, *points, sum(points), len(names), f"{100 * sum(points) / max(len(names), 1):.1f}"])
