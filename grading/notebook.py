"""`check()` for notebooks: grade the learner's current exercises/ file with the judge's own checks, isolation
and messages, on a warm worker kept for the session, and show the result as a compact table.

    from grading import check
    check("top_p_filter")   # one exercise      check("04")   # one chapter      check()   # everything + progress
"""
from __future__ import annotations

import html
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .catalog import load_chapters
from .engine import scheduler
from .engine.checker import Checker
from .model import NOT_ATTEMPTED, CaseResult, ExerciseResult
from .reports.console import progress_lines
from .reports.messages import MISTAKE_MARK, case_mistake

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
        if case_mistake(c):
            return ""
        other = next((o for o in r.cases if not o.passed and case_mistake(o)), None)
        return f"\n{MISTAKE_MARK} {case_mistake(other)} (case '{other.name}' tells it apart)" if other else ""

    def _left(self) -> list[str]:
        return [r.name for r in self.results if not r.passed]

    def __repr__(self) -> str:
        lines = []
        for r in self.results:
            marks = "".join("✓" if c.passed else "✗" for c in r.cases)
            lines.append(f"{'✓' if r.passed else '✗'} {r.chapter} {r.name:<28} {r.status:<14} {marks}")
        first = self._first_failure()
        if first:
            r, c = first
            message = c.message + self._named_elsewhere(first)
            lines.append(f"\nFirst failure: {r.name}, case '{c.name}':\n  " + message.replace("\n", "\n  "))
        if self.target is None:
            lines.append("\n" + "\n".join(progress_lines(self.results, self.chapters)))
        done = sum(r.passed for r in self.results)
        lines.append(f"\n{done}/{len(self.results)} passed in {self.seconds:.1f} s (isolation: {self.isolation}).")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for r in self.results:
            marks = "".join(f"<span title='{html.escape(c.name, quote=True)}' style='color:{'#2a2' if c.passed else '#c22'}'>"
                            f"{'✓' if c.passed else '✗'}</span>" for c in r.cases)
            colour = "#2a2" if r.passed else ("#888" if r.status == NOT_ATTEMPTED else "#c22")
            rows.append(f"<tr><td>{r.chapter}</td><td><code>{html.escape(r.name)}</code></td>"
                        f"<td style='color:{colour}'>{html.escape(r.status)}</td><td>{marks}</td></tr>")
        out = ["<table style='max-width:100%'><tr><th>ch</th><th>exercise</th><th>status</th><th>cases</th></tr>", *rows, "</table>"]
        first = self._first_failure()
        if first:
            r, c = first
            out.append(f"<p><b>First failure</b>: <code>{html.escape(r.name)}</code>, case "
                       f"<i>{html.escape(c.name)}</i></p>{PRE}{html.escape(c.message + self._named_elsewhere(first))}</pre>")
        if self.target is None:
            out.append(PRE + html.escape("\n".join(progress_lines(self.results, self.chapters))) + "</pre>")
        done = sum(r.passed for r in self.results)
        out.append(f"<p>{done}/{len(self.results)} passed in {self.seconds:.1f} s "
                   f"(isolation: {html.escape(self.isolation)})</p>")
        return "\n".join(out)


def reset_session() -> None:
    """Forget the session's Checker (its inputs and cached verdicts); the next check() builds a new one."""
    global _checker
    with _lock:
        _checker = None


def check(target: str | None = None, source: str | Path | None = None, memory_mb: int = 6144) -> CheckResult:
    """Grade `target` (an exercise name, a chapter number like "04", or everything) in `source`
    (default: the course's exercises/ folder), exactly as `python judge.py` would.

    The first call starts a warm sandboxed worker (a few seconds); later calls reuse it.
    """
    global _checker
    from .engine.sandbox import detect

    folder = Path(source) if source else REPO / "exercises"
    start = time.perf_counter()
    with _lock:
        _checker = _checker or Checker()
        chapters = load_chapters()
        try:
            results = scheduler.grade(folder, target, memory_mb=memory_mb, checker=_checker)
        except SystemExit as exc:  # an unknown name: say so in the notebook without stopping the kernel
            raise ValueError(str(exc)) from None
    return CheckResult(results, target, time.perf_counter() - start, detect().name, chapters)
