"""The Chinese edition (notebooks/zh/) is the English edition's code and outputs with translated prose, and a
translation goes stale, visibly, the moment its English cell changes."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import translations  # noqa: E402
from lesson_utils.edition import course_notebooks  # noqa: E402

LANG = "zh"
TRANSLATED = sorted((REPO / "notebooks" / LANG).glob("*.ipynb"))


@pytest.mark.parametrize("translated", TRANSLATED, ids=[p.stem for p in TRANSLATED])
def test_translation_in_step_with_english(translated):
    english = REPO / "notebooks" / translated.name
    assert english.exists(), f"notebooks/{LANG}/{translated.name} has no English original"
    report = translations.compare(english, LANG)
    assert report.ok, "\n".join(report.lines())


def _copy_pair(tmp_path: Path, name: str) -> Path:
    (tmp_path / LANG).mkdir()
    shutil.copy(REPO / "notebooks" / name, tmp_path / name)
    if (REPO / "notebooks" / LANG / name).exists():
        shutil.copy(REPO / "notebooks" / LANG / name, tmp_path / LANG / name)
    return tmp_path / name


def _edit(path: Path, cell_type: str, change) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == cell_type and "".join(c["source"]).strip())
    cell["source"] = change("".join(cell["source"]))
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
    return cell["id"]


def test_editing_english_prose_makes_its_translation_stale(tmp_path):
    english = _copy_pair(tmp_path, (TRANSLATED[0].name if TRANSLATED else "00_pipeline.ipynb"))
    translations.sync(english, LANG)
    nb = json.loads(english.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    translations.translate(english, LANG, {first["id"]: "".join(first["source"]) + "\n(译文)"})
    assert first["id"] not in translations.compare(english, LANG).stale
    edited = _edit(english, "markdown", lambda s: s.replace(" ", "  ", 1) + "\nOne more sentence.")
    assert edited == first["id"]
    report = translations.compare(english, LANG)
    assert edited in report.stale and not report.ok


def test_code_and_outputs_must_equal_english_but_comments_may_be_translated(tmp_path):
    english = _copy_pair(tmp_path, "00_pipeline.ipynb")
    translations.sync(english, LANG)
    translated = tmp_path / LANG / english.name
    _edit(translated, "code", lambda s: "# 注释\n" + s)
    assert not [p for p in translations.compare(english, LANG).layout if "code differs" in p]
    _edit(translated, "code", lambda s: s + "\nx = 1\n")
    assert [p for p in translations.compare(english, LANG).layout if "code differs" in p]


def test_a_cell_in_one_edition_only_is_reported(tmp_path):
    english = _copy_pair(tmp_path, "00_pipeline.ipynb")
    translations.sync(english, LANG)
    nb = json.loads(english.read_text(encoding="utf-8"))
    nb["cells"].append(dict(nb["cells"][0], id="new-cell-1"))
    english.write_text(json.dumps(nb), encoding="utf-8")
    assert any("only in English" in p for p in translations.compare(english, LANG).layout)
    translations.sync(english, LANG)
    assert "new-cell-1" in translations.compare(english, LANG).untranslated


def test_headings_must_line_up(tmp_path):
    english = _copy_pair(tmp_path, "00_pipeline.ipynb")
    translations.sync(english, LANG)
    nb = json.loads(english.read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    translations.translate(english, LANG, {first["id"]: "没有标题的译文"})
    assert any("headings" in p for p in translations.compare(english, LANG).layout)


def test_every_notebook_and_every_exercise_contract_is_translated():
    missing = [nb.name for nb in course_notebooks(REPO / "notebooks")  # a learner's -mine copy needs none
               if not translations.translated_path(nb, LANG).exists()]
    assert not missing, f"no notebooks/{LANG}/ edition of {missing}: run python tools/translations.py sync {LANG}"
    problems = translations.contract_problems(LANG)
    assert not problems, "\n".join(problems)


def test_a_changed_stub_docstring_makes_its_translated_contract_stale(tmp_path):
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    shutil.copytree(REPO / "notebooks", tmp_path / "notebooks")
    assert not translations.contract_problems(LANG, tmp_path / "notebooks")
    stub = tmp_path / "exercises" / "ch04_sampling.py"
    stub.write_text(stub.read_text(encoding="utf-8").replace('    """', '    """Changed. ', 1), encoding="utf-8")
    assert any("changed since" in p for p in translations.contract_problems(LANG, tmp_path / "notebooks"))
