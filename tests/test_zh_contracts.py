"""`python judge.py --lang zh hint NAME` shows the exercise's contract in Chinese, from the Chinese notebook's "your
turn" cell that translates the stub's docstring (grading/contracts.py), and says when the stub changed since."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grading import contracts, i18n
from tools.translations import stub_docstrings

REPO = Path(__file__).resolve().parent.parent
DOCS = stub_docstrings()
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_contract_has_its_chinese(name):
    found = contracts.chinese_contract(name)
    assert found, f"{name}: no notebooks/zh/ 'your turn' cell records its contract (tools/translations.py contract)"
    text, _notebook, _sha = found
    assert name in text and len(CJK.findall(text)) >= 5, text
    assert "<details>" not in text and "<summary>" not in text and "**契约**" not in text, text
    shown = re.findall(r"```python\n(?:def|class) (\w+)", text)
    others = [o for o in shown if o != name and contracts.chinese_contract(o)[0] != text]
    assert name in shown or not shown, shown
    assert not others, f"{name}'s contract also shows the contracts of {others}, which their own cells translate"


def _hint(*args: str) -> str:
    env = {**os.environ, "GRADING_LANG": "", "LANG": "en_US.UTF-8", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "",
           "PYTHONIOENCODING": "utf-8"}  # a Windows pipe would otherwise be cp1252
    done = subprocess.run([sys.executable, str(REPO / "judge.py"), *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120, encoding="utf-8")
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_hint_in_chinese_shows_the_chinese_contract():
    zh = _hint("--lang", "zh", "hint", "lookup")
    assert "提示：" in zh and "契约（出自 notebooks/zh/01a_embedding_lookup.ipynb 中的“轮到你了”单元格）：" in zh, zh
    assert "返回嵌入表 `E` 中 token id `ids` 对应的行" in zh and "def lookup(E: Tensor, ids: Tensor)" in zh, zh
    assert i18n.START not in zh and "翻译之后改过" not in zh  # today's translation is current
    en = _hint("--lang", "en", "hint", "lookup")
    assert "Hint:" in en and "契约" not in en


def test_a_changed_stub_and_a_missing_translation_are_said(tmp_path):
    exercises = tmp_path / "exercises"
    shutil.copytree(REPO / "exercises", exercises)
    path = exercises / "ch01_embeddings.py"
    path.write_text(path.read_text(encoding="utf-8").replace("Return the rows of the embedding table",
                                                            "Return the embedding rows of the table", 1),
                    encoding="utf-8")
    assert stub_docstrings(exercises)["lookup"] != DOCS["lookup"], "the edit must change lookup's docstring"
    stale = i18n.render(contracts.contract_lines("lookup", exercises=exercises), "zh")
    assert "exercises/ch01_embeddings.py 中的文档字符串在翻译之后改过" in stale, stale
    missing = i18n.render(contracts.contract_lines("lookup", folder=tmp_path), "zh")
    assert missing == "lookup 还没有中文契约：请读 exercises/ch01_embeddings.py 中 lookup 的文档字符串。"


def test_a_half_written_exercise_file_does_not_stop_the_hint(tmp_path):
    exercises = tmp_path / "exercises"
    shutil.copytree(REPO / "exercises", exercises)
    (exercises / "ch01_embeddings.py").write_text("def lookup(E, ids:\n    return E[\n", encoding="utf-8")
    shown = i18n.render(contracts.contract_lines("lookup", exercises=exercises), "zh")
    assert "返回嵌入表 `E` 中 token id `ids` 对应的行" in shown and "翻译之后改过" not in shown, shown
