"""The class summary as one static HTML page a teacher reads at a glance (written beside the gradebook).

Who was not graded and why; each exercise's pass rate, hardest first, with a bar chart; the named mistakes most
students made; the students who lost a whole chapter to a syntax or encoding error; the spread of total points.
The plots are matplotlib PNGs embedded in the page (no file beside it, nothing fetched); their labels are exercise
names and numbers, so they read the same in every language; the text is in the teacher's language.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from .. import i18n
from ..i18n import _
from . import points
from .messages import error_label
from .summary import ExerciseSummary
from ..model import ERROR, ExerciseResult

LOST_TO = ("SyntaxError", "IndentationError", "TabError", "UnicodeDecodeError")
STYLE = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;line-height:1.45;padding:0 1em}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}"
         "img{max-width:100%;height:auto}.warn{color:#a40}")


def hardest_first(summaries: list[ExerciseSummary]) -> list[ExerciseSummary]:
    """The exercises by pass rate, lowest first (then by mean points)."""
    return sorted(summaries, key=lambda s: (s.passed / s.students if s.students else 0.0,
                                            s.mean_points / s.max_points if s.max_points else 0.0, s.chapter, s.name))


def common_mistakes(summaries: list[ExerciseSummary]) -> list[tuple[str, str, int]]:
    """(exercise, named mistake, students who made it), most students first."""
    found = [(s.name, m, k) for s in summaries for m, k in s.mistakes.items()]
    return sorted(found, key=lambda t: (-t[2], t[0]))


def lost_chapters(rows: dict[str, list[ExerciseResult]]) -> list[tuple[str, str, str]]:
    """(student, chapter, error) for every chapter a student lost whole to an error at import: a syntax error or
    a file Python could not decode."""
    out = []
    for student, results in rows.items():
        chapters: dict[str, list[ExerciseResult]] = {}
        for r in results:
            chapters.setdefault(r.chapter, []).append(r)
        for chapter, rs in sorted(chapters.items()):
            labels = {i18n.render(error_label(r), "en") if r.status == ERROR else "" for r in rs}
            if len(labels) == 1:
                label = labels.pop()
                if label.split(" ")[0] in LOST_TO:
                    out.append((student, chapter, error_label(rs[0])))
    return out


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def plots(summaries: list[ExerciseSummary], totals: list[float], top: float) -> dict[str, str]:
    """{"pass_rate": data URL, "points": data URL}: the pass rate per exercise (hardest first) and the spread
    of the students' total points."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    order = hardest_first(summaries)
    fig = Figure(figsize=(7, 0.35 * len(order) + 1.2))
    ax = fig.add_subplot()
    rates = [100 * s.passed / s.students if s.students else 0.0 for s in order]
    ax.barh([f"{s.chapter} {s.name}" for s in order][::-1], rates[::-1], color="#4c72b0")
    ax.set_xlim(0, 100)
    ax.set_xlabel("% passed")
    out = {"pass_rate": _png(fig)}
    fig = Figure(figsize=(7, 2.6))
    ax = fig.add_subplot()
    ax.hist(totals, bins=min(20, max(1, len(set(totals)))), range=(0, top or 1), color="#55a868")
    ax.set_xlabel(f"points (max {points.fmt(top)})")
    ax.set_ylabel("students")
    out["points"] = _png(fig)
    return out


def to_html(summaries: list[ExerciseSummary], rows: dict[str, list[ExerciseResult]],
            ungraded: dict[str, str] | None = None, lang: str | None = None, isolation: str = "") -> str:
    """The page, in `lang` (grading/i18n.py)."""
    lang = i18n.language(lang)

    def t(text: str) -> str:
        return html.escape(i18n.render(text, lang))

    ungraded = ungraded or {}
    totals = [points.total(points.scores(rs))[0] for name, rs in rows.items() if name not in ungraded]
    top = max((points.total(points.scores(rs))[1] for rs in rows.values()), default=0.0)
    images = plots(summaries, totals or [0.0], top) if summaries else {}
    title, rate_title = t(_("Class summary")), t(_("Pass rate per exercise, hardest first"))
    points_title = t(_("Total points per student"))
    intro = t(_("{n} students. What to re-teach: the exercises with few passes and the mistakes many students made.",
                n=len(rows)))
    out = [f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>'
           f"<style>{STYLE}</style></head><body>", f"<h1>{title}</h1>", f"<p>{intro}</p>"]
    if isolation:
        out.append("<p>" + t(_("Learner code runs in: {isolation}", isolation=isolation)) + "</p>")
    if ungraded:
        head = t(_("Not graded ({n}): each has a row with 0 points.", n=len(ungraded)))
        out.append(f"<h2 class='warn'>{head}</h2><ul>")
        out += [f"<li><b>{html.escape(name)}</b>: {t(why)}</li>" for name, why in ungraded.items()]
        out.append("</ul>")
    out.append(f"<h2>{rate_title}</h2>")
    if images:
        out.append(f'<img id="pass-rate" alt="{rate_title}" src="{images["pass_rate"]}">')
    columns = [_("exercise"), _("passed"), _("not attempted"), _("mean points")]
    out.append("<table><tr>" + "".join(f"<th>{t(c)}</th>" for c in columns) + "</tr>")
    for s in hardest_first(summaries):
        out.append(f"<tr><td>{s.chapter} {html.escape(s.name)}</td><td>{s.passed}/{s.students}</td>"
                   f"<td>{s.not_attempted}</td><td>{points.fmt(s.mean_points)}/{points.fmt(s.max_points)}</td></tr>")
    out.append("</table>")
    mistakes = common_mistakes(summaries)
    out.append("<h2>" + t(_("The named mistakes most students made")) + "</h2>")
    if mistakes:
        columns = [_("students"), _("exercise"), _("mistake")]
        out.append("<table><tr>" + "".join(f"<th>{t(c)}</th>" for c in columns) + "</tr>")
        out += [f"<tr><td>{k}</td><td>{html.escape(name)}</td><td>{t(m)}</td></tr>" for name, m, k in mistakes[:15]]
        out.append("</table>")
    else:
        out.append("<p>" + t(_("No named mistake.")) + "</p>")
    lost = lost_chapters({n: rs for n, rs in rows.items() if n not in ungraded})
    out.append("<h2>" + t(_("Students who lost a whole chapter to a syntax or encoding error")) + "</h2>")
    if lost:
        out.append("<ul>" + "".join(f"<li><b>{html.escape(name)}</b>: "
                                    + t(_("chapter {chapter}: {error}", chapter=c, error=e)) + "</li>"
                                    for name, c, e in lost) + "</ul>")
    else:
        out.append("<p>" + t(_("None.")) + "</p>")
    if images:
        out += [f"<h2>{points_title}</h2>", f'<img id="points" alt="{points_title}" src="{images["points"]}">']
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def page_path(gradebook: Path) -> Path:
    """Beside the gradebook: grades.csv -> grades-summary.html."""
    return gradebook.with_name(f"{gradebook.stem}-summary.html")


def write_page(summaries: list[ExerciseSummary], rows: dict[str, list[ExerciseResult]], path: Path,
               ungraded: dict[str, str] | None = None, lang: str | None = None, isolation: str = "") -> Path:
    """Write the page to `path`; return it."""
    Path(path).write_text(to_html(summaries, rows, ungraded, lang, isolation), encoding="utf-8")
    return Path(path)
