"""Reading grading results as feedback: named mistakes, messages shared by every case, short error labels.

Named mistakes reach the judge inside a case's message as "Likely mistake: ..." (grading.checks.compare.named_mistake);
these helpers take them out so each report can show one mistake once per exercise.
"""
from __future__ import annotations

import re

from .. import i18n
from ..model import ERROR, MISTAKE_MSG, TIMEOUT, CaseResult, ExerciseResult

MISTAKE_MARK = "Likely mistake:"  # the English label; i18n.label(MISTAKE_MSG, lang) gives every language's
IMPORT_MSG = "Importing {file} failed:\n{traceback}"  # grading/engine/scheduler.py's import error
_ERROR_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit|Interrupt|Warning))\b")


def split_mistake(message: str) -> tuple[str, str]:
    """(the message without its named mistake, the named mistake or ''), for a marked message (grading/i18n.py)
    or one already rendered in any of the judge's languages."""
    found = i18n.find(message, MISTAKE_MSG)
    if found is not None:
        return found[0].rstrip(), str(found[1].get("mistake", ""))
    for lang in i18n.LANGUAGES:
        head, mark, tail = message.partition(i18n.label(MISTAKE_MSG, lang))
        if mark:
            return head.rstrip(), " ".join(tail.split())
    return message, ""


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
        return i18n._("timeout")
    if result.status != ERROR:
        return ""
    text = shared_message(result) or next((c.message for c in result.cases if not c.passed and c.message), "")
    kind, marked, text = "", text, i18n.render(text, "en")  # the traceback's lines, whatever the language
    for line in reversed(text.strip().splitlines()):
        m = _ERROR_LINE.match(line.strip())
        if m:
            kind = m.group(1)
            break
    if i18n.find(marked, IMPORT_MSG) is not None or any(text.startswith(i18n.label(IMPORT_MSG, lang))
                                                       for lang in i18n.LANGUAGES):
        return i18n._("{error} at import", error=kind or i18n._("error"))
    if kind:
        return kind
    return text.strip().splitlines()[0][:80] if text.strip() else i18n._("error")

