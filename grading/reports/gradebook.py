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
                        gradebook: Path, json_path: str | None = None, feedback_dir: str | None = None,
                        lms_csv: str | None = None, lms_format: str = "canvas", lang: str | None = None) -> None:
    """Write every class output asked for and print the class summary, from the records alone. Messages, feedback
    and the summary are in `lang` (grading/i18n.py); the gradebook's and the LMS CSV's columns stay the same in every language."""
    from .. import dependencies
    from . import console, summary

    lang = i18n.language(lang)

    def print(text: str) -> None:  # noqa: A001 - every line of the class run in `lang`
        import builtins

        builtins.print(i18n.render(text, lang))

    notes = dependencies.notes_by_student(rows) if json_path or feedback_dir else {}
    console.write_gradebook(rows, gradebook)
    print(_("Gradebook written to {path}", path=str(gradebook)))
    summaries = summary.summarize(rows)
    path = summary.summary_path(gradebook)
    path.write_text(summary.to_markdown(summaries, lang), encoding="utf-8")
    if json_path:
        console.class_to_json(rows, Path(json_path), notes, summaries, lang)
        print(_("Class JSON (every message, mistake and point) written to {path}", path=json_path))
    if feedback_dir:
        from .feedback import write_feedback

        for name, results in rows.items():
            write_feedback(Path(feedback_dir), name, results, titles, notes.get(name), lang)
        print(_("Feedback for {n} students written to {folder}/<student>.md and .html", n=len(rows),
                folder=feedback_dir))
    if lms_csv:
        from .exports import write_lms_csv

        write_lms_csv(rows, Path(lms_csv), lms_format)
        print(_("{lms} grade import CSV written to {path}", lms=lms_format.capitalize(), path=lms_csv))
    print("\n" + "\n".join(summary.summary_lines(summaries, lang)))
    print(_("Class summary written to {path}", path=str(path)))
