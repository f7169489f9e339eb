"""The judge's messages in English or Chinese: marked where they are made, translated where they are shown.

A check builds a message with `_("expected {n} rows, got {m}.", n=4, m=3)`: the English text is the gettext
msgid (a `str.format` template) and the call returns an ordinary str that carries the msgid and its arguments
between private-use marks. Marked strings concatenate, nest (an argument may itself be marked) and travel
through pickles and pipes like any str. `render(text, lang)` turns them into one language at the edge: the
console, `check()`'s table, feedback files. One grading run can so be shown in both languages (the mutant prover
checks each named mistake in English and in Chinese from one run).

`verbatim(text)` marks text that is never translated: code, reprs, tracebacks, anything the learner's code wrote.
Marks inside it are removed, so learner text cannot pose as a message. `leaks(text, lang)` lists what would
reach a reader untranslated: unmarked prose and msgids the catalog lacks (tests/test_i18n.py).

Catalogs: grading/locale/<lang>/LC_MESSAGES/<domain>.po, one domain per chapter's checks plus `judge` for the
rest, compiled by Babel to .mo (tools/messages.py extract | update | compile).
"""
from __future__ import annotations

import gettext
import json
import re
from functools import lru_cache
from pathlib import Path

START, END, VERBATIM = "\ue000", "\ue001", "\ue002"  # Unicode private-use characters: never in course text
_MARKS = re.compile("[\ue000-\ue002]")
LOCALE = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "zh")
_PROSE = re.compile(r"[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}")  # two words in a row: a sentence, not an identifier


def _plain(value: object) -> object:
    """An argument as JSON can carry it: numbers stay numbers (format specs apply in every language)."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    item = getattr(value, "item", None)
    if callable(item):
        try:
            v = item()
            if isinstance(v, (bool, int, float)):
                return v
        except (ValueError, RuntimeError, TypeError):
            pass
    return str(value)


def _(msgid: str, /, **kwargs: object) -> str:
    """A translatable message: `msgid` is the English `str.format` template, `kwargs` its arguments."""
    payload = json.dumps([msgid, {k: _plain(v) for k, v in kwargs.items()}], ensure_ascii=True)
    return START + payload + END


def N_(msgid: str) -> str:
    """Mark a constant for extraction without marking it at runtime (translated later with `_(...)`)."""
    return msgid


def verbatim(text: object) -> str:
    """Text shown as is in every language (code, reprs, learner output), with any marks removed."""
    return VERBATIM + _MARKS.sub("", str(text)) + END


def strip_marks(text: str) -> str:
    """`text` with every mark removed (for untrusted text inserted into a message)."""
    return _MARKS.sub("", text)


NOT_JUDGE = ("outputs",)  # what the notebooks' cells print and draw (lesson_utils/output_text.py)


@lru_cache(maxsize=None)
def catalog(lang: str) -> dict[str, str]:
    """Every msgid -> translation of `lang`, merged over the judge's and the course's domains ({} for English)."""
    merged: dict[str, str] = {}
    folder = LOCALE / lang / "LC_MESSAGES"
    if lang == "en" or not folder.is_dir():
        return merged
    for mo in sorted(folder.glob("*.mo")):
        if mo.stem in NOT_JUDGE:
            continue
        with mo.open("rb") as f:
            t = gettext.GNUTranslations(f)
        merged.update({k: v for k, v in t._catalog.items() if isinstance(k, str) and k and v})
    return merged


def _split(text: str):
    """Yield ('raw', s, start), ('msg', msgid, kwargs, start) and ('verbatim', s, start) pieces of a marked string,
    in order (start: where the piece begins in `text`)."""
    i = 0
    while i < len(text):
        j = min((p for p in (text.find(START, i), text.find(VERBATIM, i)) if p >= 0), default=-1)
        if j < 0:
            yield ("raw", text[i:], i)
            return
        if j > i:
            yield ("raw", text[i:j], i)
        k = text.find(END, j + 1)
        if k < 0:  # a broken mark: show the rest without marks rather than fail
            yield ("raw", strip_marks(text[j:]), j)
            return
        body = text[j + 1:k]
        if text[j] == VERBATIM:
            yield ("verbatim", body, j)
        else:
            try:
                msgid, kwargs = json.loads(body)
                yield ("msg", msgid, kwargs, j)
            except (ValueError, TypeError):
                yield ("raw", strip_marks(body), j)
        i = k + 1


def _format(template: str, kwargs: dict, lang: str) -> str:
    """`template` filled with `kwargs` (rendered in `lang`); without arguments it is used as is (braces too)."""
    if not kwargs:
        return template
    args = {k: render(v, lang) if isinstance(v, str) else v for k, v in kwargs.items()}
    return template.format(**args)


def render(text: str, lang: str = "en") -> str:
    """`text` with every marked message in `lang` (English where the catalog has no translation)."""
    if not isinstance(text, str) or (START not in text and VERBATIM not in text):
        return text
    table = catalog(lang)
    out = []
    for piece in _split(text):
        if piece[0] != "msg":
            out.append(piece[1])
            continue
        msgid, kwargs = piece[1], piece[2]
        try:
            out.append(_format(table.get(msgid, msgid), kwargs, lang))
        except (KeyError, IndexError, ValueError):  # a translation with a wrong placeholder: fall back to English
            try:
                out.append(_format(msgid, kwargs, lang))
            except (KeyError, IndexError, ValueError):
                out.append(msgid)
    return "".join(out)


def leaks(text: str, lang: str = "zh") -> list[str]:
    """What of `text` a `lang` reader would get in English: unmarked prose, and msgids `lang` lacks."""
    table = catalog(lang)
    found: list[str] = []
    for piece in _split(text) if isinstance(text, str) else ():
        if piece[0] == "raw" and _PROSE.search(piece[1]):
            found.append(piece[1].strip())
        elif piece[0] == "msg":
            if piece[1] not in table:
                found.append(piece[1])
            for v in piece[2].values():
                if isinstance(v, str):
                    found.extend(leaks(v, lang))
    return found


MARKED = "marked"  # grade(..., lang=MARKED) keeps the marks, for a caller that renders in several languages


def language(explicit: str | None = None) -> str:
    """The language to show: `explicit`, else GRADING_LANG, else the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG)."""
    import os

    for value in (explicit, os.environ.get("GRADING_LANG"), *(os.environ.get(v) for v in
                                                               ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"))):
        if value:
            code = value.split(":")[0].split(".")[0].split("_")[0].split("-")[0].lower()
            if code in LANGUAGES:
                return code
            if explicit is not None and value is explicit:
                raise ValueError(f"unknown language {explicit!r}: choose one of {', '.join(LANGUAGES)}")
    return "en"


def show(text: str, lang: str | None = None) -> str:
    """`text` rendered in `lang`, or in the language chosen by GRADING_LANG or the locale (see `language`)."""
    return render(text, language(lang))


def render_all(data, lang: str):
    """`data` (JSON-like: dicts, lists, strings) with every string rendered in `lang`."""
    if isinstance(data, str):
        return render(data, lang)
    if isinstance(data, dict):
        return {k: render_all(v, lang) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [render_all(v, lang) for v in data]
    return data


def untranslated(result, lang: str = "zh") -> list[str]:
    """`leaks` of a marked ExerciseResult: its name, message and every case's name, message and named mistake."""
    texts = [result.name, result.message, *(t for c in result.cases for t in (c.name, c.message, c.mistake))]
    return [leak for text in texts for leak in leaks(text, lang)]


def has_catalog(domain: str, lang: str = "zh") -> bool:
    """Whether `domain` (a chapter module, or "judge") has its compiled `lang` catalog."""
    return (LOCALE / lang / "LC_MESSAGES" / f"{domain}.mo").exists()


def localize(result, lang: str):
    """A copy of an ExerciseResult (or CaseResult) with its name, messages, mistake, summary and hint rendered in
    `lang`."""
    import dataclasses

    changes = {f.name: render(getattr(result, f.name), lang) for f in dataclasses.fields(result)
               if f.name in ("name", "message", "mistake", "summary", "hint")}
    if hasattr(result, "cases"):
        changes["cases"] = [localize(c, lang) for c in result.cases]
    return dataclasses.replace(result, **changes)


def find(text: str, msgid: str) -> tuple[str, dict] | None:
    """(the text before it, its arguments) of the first message `msgid` marked in `text`, else None."""
    if not isinstance(text, str) or START not in text:
        return None
    for piece in _split(text):
        if piece[0] == "msg" and piece[1] == msgid:
            return text[:piece[3]], piece[2]
    return None


def label(msgid: str, lang: str) -> str:
    """The fixed words that open message `msgid` in `lang` (before its first placeholder): how a rendered
    message is recognised, e.g. "Likely mistake:" or its Chinese."""
    return catalog(lang).get(msgid, msgid).split("{", 1)[0].strip()
