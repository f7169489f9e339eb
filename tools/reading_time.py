"""Estimated reading time of each notebook, so every one can be studied in one sitting.

    python tools/reading_time.py          # a table, longest first

The estimate is prose words / 100 per minute plus 3 s per line of code (blank and comment-only lines not
counted; a cell tagged remove-cell, the Colab set-up that the website leaves out, neither). Calibrated on the course's notebooks against a teacher's timed read-through (within about 5 min);
exercises and experiments come on top.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS_PER_MINUTE = 100
SECONDS_PER_CODE_LINE = 3
LIMIT_MINUTES = 45


def reading_minutes(notebook: Path) -> float:
    """Minutes to read one notebook: its markdown words and its non-blank, non-comment code lines."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    words = code = 0
    for cell in cells:
        if "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            words += len(re.findall(r"\S+", source))
        elif cell["cell_type"] == "code":
            code += sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))
    return words / WORDS_PER_MINUTE + code * SECONDS_PER_CODE_LINE / 60


def table(folder: Path = ROOT / "notebooks") -> list[tuple[str, float]]:
    """(notebook name, minutes) for every notebook in `folder`, longest first."""
    rows = [(nb.name, reading_minutes(nb)) for nb in sorted(folder.glob("*.ipynb"))]
    return sorted(rows, key=lambda row: -row[1])


if __name__ == "__main__":
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "notebooks"
    for name, minutes in table(folder):
        flag = "  over one sitting" if minutes > LIMIT_MINUTES else ""
        print(f"{minutes:5.0f} min  {name}{flag}")
