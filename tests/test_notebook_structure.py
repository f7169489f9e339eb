"""Every notebook studies in one sitting and has the parts a learner expects: goals, prerequisites, a
self-test, a summary and a glossary whose terms point at real sections; the README's index of terms is current."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import glossary  # noqa: E402
import reading_time  # noqa: E402

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
IDS = [nb.stem for nb in NOTEBOOKS]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_one_sitting(notebook):
    minutes = reading_time.reading_minutes(notebook)
    assert minutes <= reading_time.LIMIT_MINUTES, (
        f"{notebook.name} reads in about {minutes:.0f} min, more than one sitting "
        f"({reading_time.LIMIT_MINUTES} min): split it into parts or move reference material to an appendix")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_learner_landmarks(notebook):
    text = "\n".join(glossary._cells(notebook)).lower()
    for landmark in ("what you will learn", "prerequisite", "self-test", "## summary"):
        assert landmark in text, f"{notebook.name} has no '{landmark}' section"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_glossary_points_at_sections(notebook):
    entries = glossary.glossary(notebook)
    assert 6 <= len(entries) <= 20, f"{notebook.name}: {len(entries)} glossary terms (want 6 to 20)"
    sections = {re.sub(r"\s+", " ", h.lower()) for h in glossary.headings(notebook)}
    for e in entries:
        places = [p.strip().lower() for p in re.split(r";|,\s(?=§|\d+\.)", e.where) if p.strip()]
        assert any(any(p.strip("`").lstrip("§ ") in s for s in sections) for p in places), (
            f"{notebook.name}: glossary term {e.term!r} says it is used in {e.where!r}, "
            "which names no heading of the notebook")
    terms = [e.term.lower() for e in entries]
    assert len(terms) == len(set(terms)), f"{notebook.name}: a glossary term appears twice"


def test_readme_index_of_terms_is_current():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert glossary.updated_readme(readme, glossary.index_markdown()) == readme, (
        "README.md's index of terms is out of date: run python tools/glossary.py")


def test_reading_time_counts_words_and_code(tmp_path):
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(" ".join(["word"] * 200)),
                nbformat.v4.new_code_cell("x = 1\n\n# a comment\ny = 2\n")]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert reading_time.reading_minutes(path) == pytest.approx(2 + 2 * 3 / 60)
