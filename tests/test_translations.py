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


def test_translated_outputs_must_carry_the_english_numbers(tmp_path):
    """The quiz cell of a Chinese notebook prints in Chinese: accepted because every number is the English one;
    changing one number in it, or the data its figure records, makes the notebook out of step, and sync keeps the
    Chinese words."""
    english = _copy_pair(tmp_path, "07_head_at_scale.ipynb")
    target = tmp_path / LANG / english.name
    en_cells = {c["id"]: c for c in json.loads(english.read_text(encoding="utf-8"))["cells"]}
    tr = json.loads(target.read_text(encoding="utf-8"))
    quiz = next(c for c in tr["cells"] if c["cell_type"] == "code" and "show_quiz" in "".join(c["source"]))
    assert quiz["outputs"] != en_cells[quiz["id"]]["outputs"] and "测验" in "".join(quiz["outputs"][0]["text"])
    assert translations.compare(english, LANG).ok
    translations.sync(english, LANG)
    assert "测验" in json.dumps(json.loads(target.read_text(encoding="utf-8")), ensure_ascii=False)

    edited = json.loads(json.dumps(tr))
    cell = next(c for c in edited["cells"] if c["id"] == quiz["id"])
    lines = cell["outputs"][0]["text"]
    i = next(i for i, line in enumerate(lines) if "151,936" in line or "0.6" in line or "12,288" in line)
    lines[i] = lines[i].replace("12,288", "12,289").replace("151,936", "151,937").replace("0.6", "0.7")
    target.write_text(json.dumps(edited, indent=1, ensure_ascii=False), encoding="utf-8")
    report = translations.compare(english, LANG)
    assert not report.ok and any(quiz["id"] in line for line in report.layout)

    figure = next(c for c in tr["cells"] if any("image/png" in o.get("data", {}) for o in c.get("outputs", [])))
    out = next(o for o in figure["outputs"] if "image/png" in o.get("data", {}))
    relabelled = dict(out, data=dict(out["data"], **{"image/png": "iVBOR"}))  # its words drawn in Chinese
    assert translations.same_numbers([out], [relabelled])
    other = [x * 1.01 for x in out["metadata"]["figure_data"]]
    redrawn = dict(relabelled, metadata=dict(out["metadata"], figure_data=other))  # other numbers drawn
    assert not translations.same_numbers([out], [redrawn])
    assert translations.same_numbers([{"output_type": "stream", "name": "stdout", "text": ["top 3 of 10: 0.25\n"]}],
                                     [{"output_type": "stream", "name": "stdout", "text": ["10 个中的前 3 个：0.25\n"]}])
    assert not translations.same_numbers([{"output_type": "stream", "name": "stdout", "text": ["p = 0.25\n"]}],
                                         [{"output_type": "stream", "name": "stdout", "text": ["p = 0.26\n"]}])


def test_every_chinese_quiz_listing_is_in_chinese():
    """show_quiz follows the notebook's edition, so each Chinese notebook's saved quiz listing is Chinese."""
    quizzes = 0
    for path in TRANSLATED:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code" and "show_quiz(" in "".join(cell["source"]):
                quizzes += 1
                text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
                assert "测验" in text and "Chapter" not in text, f"{path.name}: the quiz listing is not in Chinese"
    assert quizzes == 8
