"""What a class run prints and writes: progress per student, then the gradebook, the summary next to it, and
(when asked) the class JSON, one feedback report per student and an LMS import CSV."""
from __future__ import annotations

from pathlib import Path

from .. import i18n
from ..i18n import _
from . import points
from ..model import ExerciseResult


def progress_line(i: int, n: int, results: list[ExerciseResult], seconds: float, elapsed: float) -> str:
    """'    3/5 exercises, 6/16 points (8.1 s; 2/3 done, 16 s elapsed, about 8 s left)'."""
    got, top = points.total(points.scores(results))
    left = elapsed / i * (n - i)
    return "    " + _("{passed}/{total} exercises, {points}/{top} points ({seconds:.1f} s; {i}/{n} done, {elapsed:.0f} s "
                      "elapsed, about {left:.0f} s left)", passed=sum(r.passed for r in results), total=len(results),
                      points=points.fmt(got), top=points.fmt(top), seconds=seconds, i=i, n=n, elapsed=elapsed,
                      left=left)


def write_class_outputs(rows: dict[str, list[ExerciseResult]], titles: dict[str, str],
                        gradebook: Path | None, json_path: str | None = None, feedback_dir: str | None = None,
                        lms_csv: str | None = None, lms_format: str = "canvas", lang: str | None = None,
                        ungraded: dict[str, str] | None = None, notes: dict[str, str] | None = None,
                        junit_dir: str | None = None, gradescope_dir: str | None = None,
                        classroom_dir: str | None = None, excel: bool = False, changed: set[str] | None = None,
                        seconds: float = 0.0) -> None:
    """Write every class output asked for and print the class summary, from the records alone. Messages, feedback
    and the summary are in `lang` (grading/i18n.py); the gradebook's and the LMS CSV's columns stay the same in
    every language.

    ungraded: student -> why nothing was graded (they have a row with 0 points, and are listed first); notes:
    student -> a remark for the gradebook's note column (a file not saved as UTF-8). junit_dir, gradescope_dir,
    classroom_dir: one file per student in that tool's format. excel: CSVs start with a byte-order mark (Excel then
    reads accented and Chinese names right). changed: the students re-graded (--update), whose per-student files
    are rewritten; None: everyone's."""
    from .. import dependencies
    from . import console, summary
    from .summary_page import page_path

    lang = i18n.language(lang)
    ungraded, notes = ungraded or {}, notes or {}
    per_student = changed if changed is not None else set(rows)

    def print(text: str) -> None:  # noqa: A001 - every line of the class run in `lang`
        import builtins

        builtins.print(i18n.render(text, lang))

    want_notes = json_path or feedback_dir or gradescope_dir or classroom_dir
    deps = dependencies.notes_by_student(rows) if want_notes else {}
    summaries = summary.summarize(rows)
    if gradebook is not None:
        console.write_gradebook(rows, gradebook)
        remarks = {n: i18n.render(r, lang) for n, r in ungraded.items()} | {
            n: i18n.render(r, lang) for n, r in notes.items() if n not in ungraded}
        _finish_csv(gradebook, remarks, excel)
        print(_("Gradebook written to {path}", path=str(gradebook)))
        path = summary.summary_path(gradebook)
        isolation = console.isolation_of([r for rs in rows.values() for r in rs])
        path.write_text(summary.to_markdown(summaries, lang, ungraded, isolation), encoding="utf-8")
        from .summary_page import write_page

        write_page(summaries, rows, page_path(gradebook), ungraded, lang, isolation)
    if json_path:
        console.class_to_json(rows, Path(json_path), deps, summaries, lang)
        print(_("Class JSON (every message, mistake and point) written to {path}", path=json_path))
    if feedback_dir:
        from .feedback import write_feedback

        for name in sorted(per_student):
            write_feedback(Path(feedback_dir), name, rows[name], titles, deps.get(name), lang,
                           reason=ungraded.get(name, ""), remark=notes.get(name, ""))
        print(_("Feedback for {n} students written to {folder}/<student>.md and .html", n=len(per_student),
                folder=feedback_dir))
    for folder, kind in ((junit_dir, "junit"), (gradescope_dir, "gradescope"), (classroom_dir, "classroom")):
        if folder:
            _per_student_reports(kind, Path(folder), {n: rows[n] for n in per_student}, deps, ungraded,
                                 seconds, lang)
            print(_("One {kind} file per student written to {folder}", kind=kind, folder=folder))
    if lms_csv:
        from .exports import write_lms_csv

        write_lms_csv(rows, Path(lms_csv), lms_format, bom=excel)
        print(_("{lms} grade import CSV written to {path}", lms=lms_format.capitalize(), path=lms_csv))
    if ungraded:
        print("\n" + _("Not graded ({n}): each has a row with 0 points.", n=len(ungraded)))
        for name, why in ungraded.items():
            print(f"  {name}: " + why)
    print("\n" + "\n".join(summary.summary_lines(summaries, lang)))
    if gradebook is not None:
        print(_("Class summary written to {path}", path=str(summary.summary_path(gradebook)))
              + " (" + _("and as a page with plots: {path}", path=str(page_path(gradebook))) + ")")


def write_progress(rows: dict[str, list[ExerciseResult]], gradebook: Path, remarks: dict[str, str],
                   excel: bool = False, lang: str | None = None) -> None:
    """The gradebook as the class run stands: every student has a row; `remarks` (marked text) says why a row has
    no points yet (not graded yet, interrupted). Written after each student, so a run that is stopped or killed
    still leaves every student's row."""
    from . import console

    lang = i18n.language(lang)
    gradebook.parent.mkdir(parents=True, exist_ok=True)
    partial = gradebook.with_name(gradebook.name + ".partial")
    console.write_gradebook(rows, partial)
    _finish_csv(partial, {n: i18n.render(r, lang) for n, r in remarks.items()}, excel)
    partial.replace(gradebook)  # a reader never sees half a gradebook


def _finish_csv(path: Path, remarks: dict[str, str], bom: bool) -> None:
    """Add the gradebook's note column (why a student was not graded, or a remark) and, for Excel, a byte-order
    mark."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    if rows:
        rows[0].append("note")
        for row in rows[1:]:
            row.append(remarks.get(row[0], ""))
    with open(path, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as f:
        csv.writer(f).writerows(rows)


def _per_student_reports(kind: str, folder: Path, rows: dict[str, list[ExerciseResult]], deps: dict, ungraded: dict[str, str], seconds: float, lang: str) -> None:
    """DIR/<student>.xml (JUnit) or DIR/<student>.json (Gradescope, GitHub Classroom) for each student."""
    from . import console, exports

    folder.mkdir(parents=True, exist_ok=True)
    for name, results in rows.items():
        why = i18n.render(ungraded.get(name, ""), lang)
        if kind == "junit":
            console.to_junit(results, folder / f"{name}.xml", suite_name=name, lang=lang)
        elif kind == "gradescope":
            exports.write_gradescope(results, folder / f"{name}.json", seconds, error=why,
                                     notes=deps.get(name), lang=lang)
        else:
            exports.write_classroom(results, folder / f"{name}.json", error=why,
                                    notes=deps.get(name, {}), lang=lang)
