"""`check()` for notebooks: grade the learner's current exercises/ file with the judge's own checks, isolation
and messages, on a warm worker kept for the session, and show the result as a compact table.

    from grading import check
    check("top_p_filter")   # one exercise      check("04")   # one chapter      check()   # everything + progress
"""
from __future__ import annotations

import html
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lesson_utils.edition import notebook_language

from . import i18n
from .i18n import _
from .catalog import CatalogError, load_chapters, none_in, select
from .engine import scheduler
from .engine.checker import Checker
from .model import NOT_ATTEMPTED, CaseResult, ExerciseResult, status_text
from .worker.limits import LEAST_MEMORY_MB, MEMORY_MB
from .reports.console import progress_lines

REPO = Path(__file__).resolve().parent.parent
_checker: Checker | None = None  # inputs and verdicts, built once per session
_lock = threading.Lock()
# Feedback wraps at the notebook's width (a laptop's 1,100 px window): no line, not even a long unbroken one,
# hides behind a horizontal scrollbar (tests/test_check_html.py renders it in headless Chromium).
PRE = "<pre style='white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;max-width:100%'>"


@dataclass
class CheckResult:
    """What check() returns: `.passed`, `.results` (ExerciseResult), and a table in the notebook."""

    results: list[ExerciseResult]
    target: str | None = None
    seconds: float = 0.0
    isolation: str = ""
    chapters: list = field(default_factory=list, repr=False)
    lang: str = "en"  # the language of its table and text (grading/i18n.py)
    note: str = ""  # said above the table: why every exercise is "not attempted" (a folder without the files)

    def _t(self, text: str) -> str:
        return i18n.render(text, self.lang)

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def _first_failure(self) -> tuple[ExerciseResult, CaseResult] | None:
        for r in self.results:
            for c in r.cases:
                if not c.passed and r.status != NOT_ATTEMPTED:
                    return r, c
        return None

    def _named_elsewhere(self, first: tuple[ExerciseResult, CaseResult]) -> str:
        """When the first failure names no mistake (its input cannot tell the possible causes apart), the mistake
        a later failing case of the same exercise names, as one more line; else ''."""
        r, c = first
        if c.mistake:
            return ""
        other = next((o for o in r.cases if not o.passed and o.mistake), None)
        return "\n" + _("Likely mistake: {mistake} (case '{case}' tells it apart)", mistake=other.mistake,
                        case=other.name) if other else ""

    def _left(self) -> list[str]:
        return [r.name for r in self.results if not r.passed]

    def __repr__(self) -> str:
        lines = [self._t(self.note) + "\n"] if self.note else []
        for r in self.results:
            marks = "".join("✓" if c.passed else "✗" for c in r.cases)
            status = self._t(status_text(r.status))
            lines.append(f"{'✓' if r.passed else '✗'} {r.chapter} {r.name:<28} {_pad(status, 14)} {marks}")
        first = self._first_failure()
        if first:
            r, c = first
            message = self._t(c.full_message + self._named_elsewhere(first))
            lines.append("\n" + self._t(_("First failure: {name}, case '{case}':", name=r.name, case=c.name))
                         + "\n  " + message.replace("\n", "\n  "))
        if self.target is None:
            lines.append("\n" + self._t("\n".join(progress_lines(self.results, self.chapters))))
        done = sum(r.passed for r in self.results)
        lines.append("\n" + self._t(_("{done}/{n} passed in {seconds:.1f} s (isolation: {isolation}).", done=done,
                                      n=len(self.results), seconds=self.seconds, isolation=self.isolation)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results:
            marks = "".join(f"<span title='{html.escape(self._t(c.name), quote=True)}' "
                            f"style='color:{'#2a2' if c.passed else '#c22'}'>"
                            f"{'✓' if c.passed else '✗'}</span>" for c in r.cases)
            colour = "#1a7f1a" if r.passed else ("#666" if r.status == NOT_ATTEMPTED else "#c22")  # >= 4.5:1 on white
            rows.append(f"<tr><td>{r.chapter}</td><td><code>{html.escape(r.name)}</code></td>"
                        f"<td style='color:{colour}'>{html.escape(self._t(status_text(r.status)))}</td>"
                        f"<td>{marks}</td></tr>")
        head = "".join(f"<th>{html.escape(self._t(h))}</th>" for h in (_("ch"), _("exercise"), _("status"), _("cases")))
        out = [f"<p>{html.escape(self._t(self.note))}</p>"] if self.note else []
        out += [f"<table style='max-width:100%'><tr>{head}</tr>", *rows, "</table>"]
        first = self._first_failure()
        if first:
            r, c = first
            name, case = "<code>" + html.escape(r.name) + "</code>", "<i>" + html.escape(self._t(c.name)) + "</i>"
            out.append("<p>" + self._t(_("<b>First failure</b>: {name}, case {case}", name=name, case=case)) + "</p>"
                       + f"{PRE}{html.escape(self._t(c.full_message + self._named_elsewhere(first)))}</pre>")
        if self.target is None:
            out.append(PRE + html.escape(self._t("\n".join(progress_lines(self.results, self.chapters)))) + "</pre>")
        done = sum(r.passed for r in self.results)
        out.append("<p>" + html.escape(self._t(_("{done}/{n} passed in {seconds:.1f} s (isolation: {isolation}).",
                                                 done=done, n=len(self.results), seconds=self.seconds,
                                                 isolation=self.isolation))) + "</p>")
        return "\n".join(out)


def reset_session() -> None:
    """Forget the session's Checker (its inputs and cached verdicts); the next check() builds a new one."""
    global _checker
    with _lock:
        _checker = None


def check_language(lang: str | None = None) -> str:
    """check()'s language: `lang`, else GRADING_LANG, else the notebook's (notebooks/zh/ -> zh), else the locale."""
    if lang or os.environ.get("GRADING_LANG"):
        return i18n.language(lang)
    return notebook_language() or i18n.language()


def exercises_folder() -> Path:
    """The folder check() grades by default: $COURSE_EXERCISES (your copy on Colab: lesson_utils/colab.py), else
    the course's exercises/ folder."""
    return Path(os.environ["COURSE_EXERCISES"]) if os.environ.get("COURSE_EXERCISES") else REPO / "exercises"


def check(target: str | None = None, source: str | Path | None = None, memory_mb: int = MEMORY_MB,
          lang: str | None = None) -> CheckResult:
    """Grade `target` (an exercise name, a chapter number like "04", or everything) in `source`
    (default: exercises_folder()), exactly as `python judge.py` would.

    The first call starts a warm sandboxed worker (a few seconds); later calls reuse it. `lang` ("en" or "zh"):
    the language of the answer; by default a notebook under notebooks/zh/ answers in Chinese (check_language).
    """
    global _checker
    from .engine.sandbox import detect

    folder = Path(source) if source else exercises_folder()
    if not folder.is_dir():  # a typo would otherwise grade every exercise as "not attempted"
        raise FileNotFoundError(i18n.render(_(
            "No folder {folder}: give check() the folder that holds your exercise files, check(\"04\", "
            "source=\"my_folder\"), or leave source out for the course's exercises/.",
            folder=i18n.verbatim(folder)), check_language(lang)))
    if not (isinstance(memory_mb, int) and memory_mb >= LEAST_MEMORY_MB):
        raise ValueError(i18n.render(_(
            "memory_mb is megabytes, a whole number of at least {least} (the default is {default}), not {value}.",
            least=LEAST_MEMORY_MB, default=MEMORY_MB, value=i18n.verbatim(repr(memory_mb))), check_language(lang)))
    start = time.perf_counter()
    with _lock:
        chapters = load_chapters()
        try:
            wanted = select(chapters, target)  # an unknown name: a CatalogError (a ValueError) before any worker starts
        except CatalogError as exc:
            raise CatalogError(exc.render(check_language(lang))) from None  # in the notebook's language
        missing = none_in(folder, wanted)
        note = _("{folder} holds none of the files to grade ({files}), so every exercise is 'not attempted': give "
                 "check() the folder that holds them, check(\"04\", source=\"my_folder\").",
                 folder=i18n.verbatim(folder), files=i18n.verbatim(missing)) if missing else ""
        _checker = _checker or Checker()
        results = scheduler.grade(folder, target, memory_mb=memory_mb, checker=_checker, lang=i18n.MARKED)
    shown = check_language(lang)
    return CheckResult([i18n.localize(r, shown) for r in results], target, time.perf_counter() - start,
                       detect().name, chapters, shown, note)


def _pad(text: str, width: int) -> str:
    from .reports.console import _pad as pad

    return pad(text, width)
