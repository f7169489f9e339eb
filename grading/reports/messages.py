"""Reading grading results as feedback: named mistakes, messages shared by every case, short error labels.

Everything here reads the result records (grading/model.py: CaseResult.mistake, CaseResult.error_type,
ExerciseResult.import_error); no message text is parsed back.
"""
from __future__ import annotations

from .. import i18n
from ..model import ERROR, TIMEOUT, ExerciseResult


def mistakes(result: ExerciseResult) -> list[tuple[str, int]]:
    """Each distinct named mistake of the failed cases, with how many cases show it, most frequent first."""
    counts: dict[str, int] = {}
    for c in result.cases:
        if not c.passed and c.mistake:
            counts[c.mistake] = counts.get(c.mistake, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def shared_message(result: ExerciseResult) -> str | None:
    """The one message (with its named mistake) every case failed with (an import error, a timeout, a crash), or
    None."""
    if result.passed:
        return None
    if result.message:
        return result.message
    failed = [c.full_message for c in result.cases if not c.passed]
    if len(result.cases) > 1 and len(failed) == len(result.cases) and len(set(failed)) == 1:
        return failed[0]
    return None


def error_label(result: ExerciseResult) -> str:
    """A short name for why an exercise errored: 'SyntaxError at import', 'ValueError', 'timeout', ... or ''."""
    if result.status == TIMEOUT:
        return i18n._("timeout")
    if result.status != ERROR:
        return ""
    if result.import_error:
        return i18n._("{error} at import", error=result.import_error)
    kind = next((c.error_type for c in result.cases if not c.passed and c.error_type), "")
    if kind:
        return kind
    text = shared_message(result) or next((c.message for c in result.cases if not c.passed and c.message), "")
    text = i18n.render(text, "en")  # no class to name (the worker died, a result too big): its first line
    return text.strip().splitlines()[0][:80] if text.strip() else i18n._("error")
