"""An exercise's contract in Chinese, for `python judge.py --lang zh hint NAME`: the Chinese notebook's "your turn"
cell that translates the stub's docstring (tools/translations.py records in that cell's metadata which function's
docstring it translates, and the hash of the version it translated, so a changed stub is said to be newer).

Its messages are in the gettext domain `course` (tools/messages.py), not `judge`.
"""
from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

from .i18n import _, verbatim

REPO = Path(__file__).resolve().parent.parent
ZH_NOTEBOOKS = REPO / "notebooks" / "zh"
MARKER = "**契约**"  # a contract written out in the cell: "**契约**（桩函数的文档字符串）：" and the docstring to the end
DEFINES = re.compile(r"```python\n(?:def|class) (\w+)")  # a docstring's signature block, as the cells show it
DETAILS = re.compile(r"<details><summary>契约：(.*?)</summary>(.*?)</details>", re.S)


def _docstring(name: str, exercises: Path) -> tuple[str, Path] | tuple[None, None]:
    """The docstring of function or class `name` in the exercise files and its file (a file that does not parse,
    half-written by the learner, is read no further)."""
    for path in sorted(exercises.glob("ch*.py")):
        try:
            body = ast.parse(path.read_text(encoding="utf-8")).body
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                return ast.get_docstring(node), path
    return None, None


def _plain(markdown: str) -> str:
    """Notebook markdown as terminal text: HTML tags out, <code> as backticks, no run of blank lines."""
    text = re.sub(r"</?code>", "`", markdown)
    text = re.sub(r"</?(details|summary|b|i|em|strong)>", "", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _extract(source: str, name: str, recorded: list[str]) -> str | None:
    """The contract of `name` in a cell: its <details> block, else the text from the contract marker on (only the
    docstrings the cell records as translated, when it shows several)."""
    for summary, body in DETAILS.findall(source):
        if f"<code>{name}(" in summary:
            return _plain(summary + "\n\n" + body)
    if MARKER not in source:
        return None
    text = source[source.index(MARKER):].split("\n", 1)[-1]  # the marker's own line is the header's job
    chunks = re.split(r"(?=```python\n)", text)
    named = [c for c in chunks if (m := DEFINES.match(c)) and m.group(1) in recorded]
    return _plain("".join(named) if named else text)


def chinese_contract(name: str, folder: Path = ZH_NOTEBOOKS) -> tuple[str, Path, str] | None:
    """(the contract's Chinese text, its notebook, the hash of the English docstring it translates), or None."""
    for path in sorted(folder.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            entries = ((cell.get("metadata") or {}).get("translation") or {}).get("contracts", [])
            sha = next((e["sha"] for e in entries if e.get("function") == name), None)
            if sha and cell["cell_type"] == "markdown":
                text = _extract("".join(cell["source"]), name, [e.get("function") for e in entries])
                if text:
                    return text, path, sha
    return None


def contract_lines(name: str, exercises: Path = REPO / "exercises", folder: Path = ZH_NOTEBOOKS) -> str:
    """What `judge.py --lang zh hint NAME` adds: the Chinese contract (and whether the stub changed since it was
    translated), or where to read the English one. Marked text (grading/i18n.py)."""
    doc, file = _docstring(name, exercises)
    found = chinese_contract(name, folder)
    where = f"exercises/{file.name}" if file else "exercises/"
    if found is None:
        return _("No Chinese contract for {name} yet: read the docstring of {name} in {file}.", name=name, file=where)
    text, notebook, sha = found
    shown_as = "notebooks/zh/" + notebook.name
    lines = [_("Contract (from the 'your turn' cell of {notebook}):", notebook=shown_as),
             verbatim(text)]
    if doc is not None and hashlib.sha256(doc.encode("utf-8")).hexdigest()[:16] != sha:  # tools/translations.py's hash
        lines.append(_("The docstring in {file} changed after this was translated: where they differ, the file is "
                       "right.", file=where))
    return "\n".join(lines)
