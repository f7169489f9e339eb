"""The course-wide index of terms, collected from every notebook's `## Glossary` table.

    python tools/glossary.py            # rewrite the index between the markers in README.md
    python tools/glossary.py --check    # exit 1 if the README's index is out of date

Each notebook has one markdown cell that starts with `## Glossary`, followed by a table with the header
`| term | meaning | where |`. The index lists every term once, with the notebooks that define it.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # lesson_utils, when run as python tools/glossary.py
from lesson_utils.edition import course_notebooks  # noqa: E402

HEADER = ("term", "meaning", "where")
START, END = "<!-- glossary index: start -->", "<!-- glossary index: end -->"


@dataclass(frozen=True)
class Entry:
    term: str
    meaning: str
    where: str
    notebook: str


def _cells(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def _row(line: str) -> list[str]:
    """The cells of one markdown table row; `\\|` inside a cell stays a literal bar."""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [p.strip().replace("\\|", "|") for p in parts]


def glossary(notebook: Path) -> list[Entry]:
    """The rows of a notebook's glossary table; ValueError naming the notebook if it has none or it is malformed."""
    cells = [c for c in _cells(notebook) if c.lstrip().startswith("## Glossary")]
    if len(cells) != 1:
        raise ValueError(f"{notebook.name}: expected one markdown cell starting with '## Glossary', found {len(cells)}")
    lines = [line for line in cells[0].splitlines() if line.strip().startswith("|")]
    if len(lines) < 3 or tuple(c.lower() for c in _row(lines[0])) != HEADER:
        raise ValueError(f"{notebook.name}: the glossary table must start with the header | term | meaning | where |")
    entries = []
    for line in lines[2:]:
        cells_ = _row(line)
        if len(cells_) != 3 or not all(cells_):
            raise ValueError(f"{notebook.name}: glossary row needs a term, a meaning and a place: {line.strip()}")
        entries.append(Entry(*cells_, notebook=notebook.name))
    return entries


def headings(notebook: Path) -> set[str]:
    """Every markdown heading's text in a notebook (without the #s)."""
    return {line.lstrip("#").strip() for cell in _cells(notebook) for line in cell.splitlines()
            if line.startswith("#")}


def index_markdown(folder: Path = ROOT / "notebooks") -> str:
    """A table: each term (case-insensitive, first spelling kept) and links to the notebooks that define it."""
    where: dict[str, tuple[str, list[str]]] = {}
    for nb in course_notebooks(folder):  # a learner's -mine copy is not the course's
        for e in glossary(nb):
            spelled, books = where.setdefault(e.term.lower(), (e.term, []))
            if nb.name not in books:
                books.append(nb.name)
    lines = ["| term | notebooks |", "|---|---|"]
    for key in sorted(where, key=lambda k: k.strip("`'\" ").lower()):
        term, books = where[key]
        links = ", ".join(f"[{b.split('_')[0]}](notebooks/{b})" for b in books)
        lines.append(f"| {term.replace('|', chr(92) + '|')} | {links} |")
    return "\n".join(lines)


def updated_readme(readme: str, index: str) -> str:
    """The README text with the index between the markers replaced."""
    if START not in readme or END not in readme:
        raise ValueError(f"README.md needs the markers {START} and {END}")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{index}\n{END}{tail}"


def main(argv: list[str]) -> int:
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    new = updated_readme(readme, index_markdown())
    if "--check" in argv:
        if new != readme:
            print("README.md's index of terms is out of date: run python tools/glossary.py")
            return 1
        return 0
    readme_path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
