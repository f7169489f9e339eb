"""Text that came from a learner (errors, prints, file and folder names), made safe to show a teacher.

Every report goes through here, once, where results enter the reports (judge.py calls `tidy` on each result as it
arrives, and `escape` on every student name):
- control characters are escaped (`\\x1b`, `\\r`, ...), so an ANSI sequence or a carriage return in an error
  message cannot move the cursor, recolour or overwrite the judge's own lines on a terminal, or hide in a CSV;
- the sandbox's scratch path of a learner's file is shown as `exercises/<file>`, the file the learner edits;
- a file that is not UTF-8 gets the fix ("save it as UTF-8", and how) beside Python's decode error.
"""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Callable

from .. import i18n
from ..i18n import _
from ..model import ExerciseResult

KEEP = "\n\t"
_BIDI = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
_SCRATCH_PATH = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[\\/](?:[^\\/\s\"']+[\\/])*(ch\d\d_\w+\.py)")
_MARKED = re.compile(f"{i18n.START}(.*?){i18n.END}", re.S)  # a marked message; its JSON holds no raw mark
_NOT_UTF8 = ("Non-UTF-8 code", "can't decode byte", "invalid start byte", "invalid continuation byte")


def _escape_chars(text: str) -> str:
    return "".join(ch if ch in KEEP or (unicodedata.category(ch) != "Cc" and ch not in _BIDI)
                   else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _each_text(text: str, fn: Callable[[str], str]) -> str:
    """`fn` applied to every piece of plain text in `text`, inside marked messages' arguments too (grading/i18n.py
    keeps those as JSON, where a control character is written \\u001b until the message is rendered)."""
    out, pos = [], 0
    for m in _MARKED.finditer(text):
        out.append(fn(text[pos:m.start()]))
        try:
            msgid, args = json.loads(m.group(1))
            args = {k: _each_text(v, fn) if isinstance(v, str) else v for k, v in args.items()}
            out.append(i18n.START + json.dumps([msgid, args], ensure_ascii=True) + i18n.END)
        except (ValueError, TypeError, AttributeError):
            out.append(fn(m.group(0)))
        pos = m.end()
    out.append(fn(text[pos:]))
    return "".join(out)


def escape(text: str) -> str:
    """`text` with every control character but newline and tab (and the bidirectional overrides) written as an
    escape: 'a\\x1b[2Kb' shows as the characters a, \\, x, 1, b, [, 2, K, b. Marked messages keep their marks."""
    return _each_text(text, _escape_chars) if isinstance(text, str) else text


def course_paths(text: str) -> str:
    """Every absolute path of a chapter file (the sandbox's scratch copy) written as exercises/<file>."""
    return _each_text(text, lambda piece: _SCRATCH_PATH.sub(r"exercises/\1", piece))


def encoding_advice(text: str) -> str:
    """The fix for a file Python cannot read as UTF-8, or '' when `text` is about something else."""
    return utf8_advice() if any(sign in text for sign in _NOT_UTF8) else ""


def utf8_advice() -> str:
    """How to save a file as UTF-8, in the editors learners use."""
    return _("Save the file as UTF-8: in VS Code click the encoding in the status bar, then 'Save with Encoding' > "
             "UTF-8; in JupyterLab or Notepad copy the text into a new file and save it (UTF-8 is their default).")


def clean(text: str) -> str:
    """escape(course_paths(text)), with the UTF-8 advice added when Python could not decode the file."""
    if not text:
        return text
    advice = encoding_advice(text)
    text = escape(course_paths(text))
    return text + "\n" + advice if advice and advice not in text else text


def tidy(result: ExerciseResult) -> ExerciseResult:
    """`result` (changed in place and returned) with its message and every case's name and message cleaned."""
    result.message = clean(result.message)
    for c in result.cases:
        c.message, c.name = clean(c.message), escape(c.name)
    return result
