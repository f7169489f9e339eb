"""What a notebook's own code cells print, in the reader's language, with the code cells left as they are.

The two editions run the same code, so a cell's `print(f"sum of probabilities = {s:.4f}")` prints English in
both. In a translated edition, kernel_hooks.py puts `TranslatingStream` on the kernel's stdout: each printed line
becomes a template (its numbers taken out as {0}, {1}, ...), the template is looked up in the gettext domain `outputs`
(grading/locale/<lang>/LC_MESSAGES/outputs.po, whose msgids python -m tools.messages takes from the English
notebooks' saved outputs), and the translation is printed with the very same numbers put back. A line the catalog
does not know (a table row, a token, a learner's own print) is printed unchanged.
"""
from __future__ import annotations

import gettext
import re
import unicodedata
from functools import lru_cache

from . import edition

DOMAIN = "outputs"
# a number standing alone: not the 2 of gpt2 or float64, nor the digits of a hexadecimal name
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)*(?:[eE][+-]?\d+)?(?![\w])")
GAP = re.compile(r"(?<=\S) {2,}(?=\S)")
SLOT = re.compile(r"\{(\d+)\}")
WORD = re.compile(r"[A-Za-z]{3,}")
CELL_WORD = re.compile(r"[A-Za-z]{2,}")  # a table cell is short: "no" is a word there
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")


def template(line: str) -> tuple[str, list[str]]:
    """'p = 0.25 of 3' -> ('p = {0} of {1}', ['0.25', '3']); a gap of two spaces or more (columns, whose width
    follows the numbers) becomes two spaces."""
    numbers: list[str] = []
    line = GAP.sub("  ", line)

    def slot(match: re.Match) -> str:
        numbers.append(match.group(0))
        return "{%d}" % (len(numbers) - 1)

    return NUMBER.sub(slot, line), numbers


def fill(text: str, numbers: list[str]) -> str:
    """Put `numbers` back into a template's slots."""
    return SLOT.sub(lambda m: numbers[int(m.group(1))], text)


def needs_translation(line: str) -> bool:
    """A line worth a catalog entry: at least two English words outside quotes, and no braces of its own (which
    would be mistaken for slots)."""
    stripped = line.strip()
    if not stripped or "{" in stripped or "}" in stripped:
        return False
    return len(WORD.findall(QUOTED.sub("", stripped))) >= 2


@lru_cache(maxsize=None)
def _catalog(lang: str) -> gettext.NullTranslations:
    return gettext.translation(DOMAIN, edition.LOCALE, languages=[lang], fallback=True)


def _translated(text: str, lang: str) -> str | None:
    """`text` (stripped) in `lang` with its own numbers put back, or None where the catalog lacks it or its
    translation does not have the template's slots."""
    tpl, numbers = template(text)
    translated = _catalog(lang).gettext(tpl)
    if translated == tpl or sorted(SLOT.findall(translated)) != sorted(SLOT.findall(tpl)):
        return None
    return fill(translated, numbers)


def translate_line(line: str, lang: str) -> str:
    """`line` in `lang` where the catalog has it (leading spaces kept), else `line` itself."""
    if lang == "en" or not needs_translation(line):
        return line
    body = line.lstrip(" ")
    text = _translated(body.rstrip(), lang)
    return line if text is None else line[:len(line) - len(body)] + text + body[len(body.rstrip()):]


class TranslatingStream:
    """A text stream that passes whole lines through `translate_line`; the rest of the stream's API is the
    wrapped stream's (a partial line goes out as it is on flush)."""

    def __init__(self, stream, lang: str):
        self._stream, self._lang, self._pending = stream, lang, ""

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            self._stream.write("".join(translate_line(line, self._lang) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


DASHES = re.compile(r"^-+(?:  +-+)+$")  # two columns at least: a single rule is not a table


def table_spans(dash_line: str) -> list[tuple[int, int]]:
    """The columns of a print_table table, from its line of dashes: [(start, end), ...]."""
    return [m.span() for m in re.finditer(r"-+", dash_line)]


def display_width(text: str) -> int:
    """Columns `text` takes in a fixed-width font: two for a wide (CJK) character."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _index(line: str, column: int) -> int:
    """The index of the first character of `line` at or after screen column `column`."""
    width = 0
    for i, ch in enumerate(line):
        if width >= column:
            return i
        width += display_width(ch)
    return len(line)


def split_row(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """A table line cut at its columns, counted in screen columns (the last column runs to the end of the line)."""
    cuts = [_index(line, s) for s, _ in spans] + [None]
    return [line[cuts[i]:cuts[i + 1]].strip() for i in range(len(spans))]


def _fits(line: str, spans: list[tuple[int, int]]) -> bool:
    """A line is a row of the table whose columns are `spans`: two spaces before every column but the first."""
    return all(display_width(line) <= start - 2 or (
        display_width(line[:_index(line, start - 2)]) == start - 2 and line[_index(line, start - 2):][:2] == "  ")
        for start, _end in spans[1:])


def catalog_entries(text: str) -> list[str]:
    """The msgids a saved English output asks for: each line worth translating, except that a print_table table
    (a header, a line of dashes, the rows that fit its columns) asks for its cells, which print_table translates one by
    one so that the columns still line up."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if i + 1 < len(lines) and DASHES.match(lines[i + 1].strip()) and lines[i].strip():
            spans = table_spans(lines[i + 1])
            j = i + 2
            while j < len(lines) and lines[j].strip() and _fits(lines[j], spans):
                j += 1
            for row in [lines[i], *lines[i + 2:j]]:
                out += [template(cell)[0] for cell in split_row(row, spans) if CELL_WORD.search(QUOTED.sub("", cell))]
            i = j
            continue
        if needs_translation(lines[i]):
            out.append(template(lines[i].strip())[0])
        i += 1
    return out


def translate_cell(text: str, lang: str) -> str:
    """One table cell or header in `lang` where the catalog has it, else `text` itself."""
    if lang == "en" or not CELL_WORD.search(QUOTED.sub("", text)) or "{" in text or "}" in text:
        return text
    translated = _translated(text.strip(), lang)
    return text if translated is None else translated
