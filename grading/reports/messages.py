"""Reading grading results as feedback: named mistakes, messages shared by every case, short error labels.

Named mistakes reach the judge inside a case's message as "Likely mistake: ..." (grading.checks.compare.named_mistake);
these helpers take them out so each report can show one mistake once per exercise.
"""
from __future__ import annotations

import re

from ..model import ERROR, TIMEOUT, CaseResult, ExerciseResult

MISTAKE_MARK = "Likely mistake:"
_ERROR_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit|Interrupt|Warning))\b")


def split_mistake(message: str) -> tuple[str, str]:
    """(the message without its named mistake, the named mistake or '')."""
    head, mark, tail = message.partition(MISTAKE_MARK)
    if not mark:
        return message, ""
    return head.rstrip(), " ".join(tail.split())


def case_mistake(case: CaseResult) -> str:
    """The named mistake in one case's message, or ''."""
    return split_mistake(case.message)[1]


def mistakes(result: ExerciseResult) -> list[tuple[str, int]]:
    """Each distinct named mistake of the failed cases, with how many cases show it, most frequent first."""
    counts: dict[str, int] = {}
    for c in result.cases:
        m = "" if c.passed else case_mistake(c)
        if m:
            counts[m] = counts.get(m, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def shared_message(result: ExerciseResult) -> str | None:
    """The one message every case failed with (an import error, a timeout, a crash), or None."""
    if result.passed:
        return None
    if result.message:
        return result.message
    failed = [c.message for c in result.cases if not c.passed]
    if len(result.cases) > 1 and len(failed) == len(result.cases) and len(set(failed)) == 1:
        return failed[0]
    return None


def error_label(result: ExerciseResult) -> str:
    """A short name for why an exercise errored: 'SyntaxError at import', 'ValueError', 'timeout', ... or ''."""
    if result.status == TIMEOUT:
        return "timeout"
    if result.status != ERROR:
        return ""
    text = shared_message(result) or next((c.message for c in result.cases if not c.passed and c.message), "")
    kind = ""
    for line in reversed(text.strip().splitlines()):
        m = _ERROR_LINE.match(line.strip())
        if m:
            kind = m.group(1)
            break
    if text.startswith("Importing "):
        return f"{kind or 'error'} at import"
    if kind:
        return kind
    return text.strip().splitlines()[0][:80] if text.strip() else "error"

