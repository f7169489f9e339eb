"""One feedback report per student, in Markdown and in HTML (for e-mailing), holding what the learner would see.

Every exercise's status and points, totals per chapter and overall, and for each exercise not passed: the failed
cases with expected vs got, the named mistake (once), a note when it fails through another of the learner's own
functions, and the hint. Both formats are rendered from the same list of blocks.
"""
from __future__ import annotations

import html
from pathlib import Path

from .. import dependencies, i18n
from ..i18n import _
from . import points
from .messages import mistakes, shared_message
from .console import isolation_of
from ..model import NOT_ATTEMPTED, ExerciseResult, status_text

Block = tuple  # ("h1"|"h2"|"h3"|"p"|"pre"|"ul", text or items) or ("table", header, rows)
MAX_FAILED_SHOWN = 5  # failed cases written out per exercise; the rest are counted


def blocks(student: str, results: list[ExerciseResult], titles: dict[str, str],
           notes: dict | None = None) -> list[Block]:
    """The report's content for one student (`notes`: dependencies.notes_for, when the caller has them)."""
    sc = points.scores(results)
    got, top = points.total(sc)
    per = points.chapter_totals(sc)
    if notes is None:
        notes = dependencies.notes_for(results)
    out: list[Block] = [
        ("h1", _("Feedback for {student}", student=student)),
        ("p", _("Total: {points} / {top} points; {passed} of {n} exercises passed.", points=points.fmt(got),
                top=points.fmt(top), passed=sum(r.passed for r in results), n=len(results))),
        ("p", _("Your code ran isolated by: {isolation}.", isolation=isolation_of(results))),
    ]
    for chapter, (p, m) in per.items():
        rs = [(r, s) for r, s in zip(results, sc) if r.chapter == chapter]
        out.append(("h2", _("Chapter {chapter}: {title} ({points} / {top} points)", chapter=chapter,
                            title=titles.get(chapter, ""), points=points.fmt(p), top=points.fmt(m))))
        out.append(("table", [_("exercise"), _("status"), _("cases passed"), _("points")],
                    [[r.name, status_text(r.status), f"{sum(c.passed for c in r.cases)}/{len(r.cases)}",
                      f"{points.fmt(s.points)} / {points.fmt(s.max_points)}"] for r, s in rs]))
        shown: dict[str, str] = {}  # a message several exercises share (an import error) is written out once
        for r, s in rs:
            if not r.passed:
                out += exercise_blocks(r, notes.get((r.chapter, r.name), ""), shown)
    return out


def exercise_blocks(r: ExerciseResult, note: str = "", shown: dict[str, str] | None = None) -> list[Block]:
    """What a learner needs to fix one exercise: failed cases, the named mistakes, the note, the hint.

    shown: messages already written out for earlier exercises (message -> exercise), updated here."""
    out: list[Block] = [("h3", f"{r.name}: " + status_text(r.status))]
    shared = shared_message(r)
    failed = [c for c in r.cases if not c.passed]
    if r.status == NOT_ATTEMPTED:
        out.append(("p", _("Not attempted yet: the function still raises NotImplementedError, or the answer is "
                           "missing.")))
    elif shared is not None and shown is not None and shared in shown:
        out.append(("p", _("Every case ({n}) failed with the same error as {first} above.", n=len(r.cases),
                           first=shown[shared])))
    elif shared is not None:
        out += [("p", _("Every case ({n}) failed with:", n=len(r.cases))), ("pre", shared)]
        if shown is not None:
            shown[shared] = r.name
    else:
        if r.is_quiz:
            out.append(("p", _("{failed} of {n} questions are wrong or unanswered:", failed=len(failed), n=len(r.cases))))
        else:
            out.append(("p", _("{failed} of {n} cases failed:", failed=len(failed), n=len(r.cases))))
        for c in failed[:MAX_FAILED_SHOWN]:
            out += [("p", _("Case: {case}", case=c.name)), ("pre", c.message)]
        if len(failed) > MAX_FAILED_SHOWN:
            out.append(("p", _("... and {n} more failed cases.", n=len(failed) - MAX_FAILED_SHOWN)))
    found = mistakes(r)
    if found:
        out.append(("p", _("Likely mistake:")))
        out.append(("ul", [_("{mistake} ({n} of {failed} failed cases)", mistake=m, n=n, failed=len(failed))
                           for m, n in found]))
    if note:
        out.append(("p", _("Note: {note}", note=note)))
    if r.hint:
        out.append(("p", _("Hint: {hint}", hint=r.hint)))
    return out


def rendered(doc: list[Block], lang: str) -> list[Block]:
    """The blocks with every marked message in `lang`."""
    return [tuple(i18n.render_all(list(b), lang)) for b in doc]


def to_markdown(doc: list[Block], lang: str | None = None) -> str:
    """Render blocks as Markdown in `lang` (grading/i18n.py; None: GRADING_LANG or the locale)."""
    doc = rendered(doc, i18n.language(lang))
    out = []
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + b[1])
        elif kind == "p":
            out.append(b[1])
        elif kind == "pre":
            fence = "````" if "```" in b[1] else "```"
            out.append(f"{fence}text\n{b[1]}\n{fence}")
        elif kind == "ul":
            out.append("\n".join(f"- {item}" for item in b[1]))
        elif kind == "table":
            cell = lambda t: str(t).replace("|", "\\|")  # noqa: E731
            rows = [b[1], ["---"] * len(b[1]), *b[2]]
            out.append("\n".join("| " + " | ".join(cell(t) for t in row) + " |" for row in rows))
    return "\n\n".join(out) + "\n"


HTML_STYLE = ("body{font-family:system-ui,sans-serif;max-width:52em;margin:2em auto;line-height:1.45}"
              "pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap}"
              "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}")


def to_html(doc: list[Block], title: str, lang: str | None = None) -> str:
    """Render blocks as a standalone HTML page in `lang` (inline style only, so it survives e-mail)."""
    lang = i18n.language(lang)
    doc, title = rendered(doc, lang), i18n.render(title, lang)
    e = html.escape
    out = [f"<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{e(title)}</title>"
           f"<style>{HTML_STYLE}</style></head><body>"]
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2", "h3", "p"):
            out.append(f"<{kind}>{e(b[1])}</{kind}>")
        elif kind == "pre":
            out.append(f"<pre>{e(b[1])}</pre>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{e(i)}</li>" for i in b[1]) + "</ul>")
        elif kind == "table":
            head = "".join(f"<th>{e(str(h))}</th>" for h in b[1])
            body = "".join("<tr>" + "".join(f"<td>{e(str(t))}</td>" for t in row) + "</tr>" for row in b[2])
            out.append(f"<table><tr>{head}</tr>{body}</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_feedback(folder: Path, student: str, results: list[ExerciseResult], titles: dict[str, str],
                   notes: dict | None = None,
                   lang: str | None = None) -> tuple[Path, Path]:
    """Write `folder/<student>.md` and `folder/<student>.html` in `lang` (grading/i18n.py); return both paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lang = i18n.language(lang)
    doc = blocks(student, results, titles, notes)
    md, page = folder / f"{student}.md", folder / f"{student}.html"
    md.write_text(to_markdown(doc, lang), encoding="utf-8")
    page.write_text(to_html(doc, _("Feedback for {student}", student=student), lang), encoding="utf-8")
    return md, page
