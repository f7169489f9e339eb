"""The judge speaks English and Chinese: catalogs complete and compiled, every message of the suite's runs from the
catalog (the prover's run in `judge.py check`, tests/test_judge.py), and the language chosen by --lang, the locale
or a Chinese notebook."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grading import i18n
from grading.i18n import _, verbatim
from tools import messages

REPO = Path(__file__).resolve().parent.parent


def test_catalogs_match_the_sources_and_are_compiled():
    """Extraction gives exactly each catalog's msgids; every one translated, same placeholders, .mo fresh.
    A chapter domain whose catalog is not written yet is skipped (they are written separately)."""
    assert messages.check(only_existing=True) == []
    assert (i18n.LOCALE / "zh" / "LC_MESSAGES" / "judge.po").exists()


def test_dropping_a_translation_fails_the_check(tmp_path):
    root = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE, root)
    po = root / "zh" / "LC_MESSAGES" / "judge.po"
    cat = messages.read(po, "zh")
    victim = next(m for m in cat if m.id == "Likely mistake: {mistake}")
    victim.string = ""
    messages.write(cat, po)
    problems = messages.check({"judge": messages.sources()["judge"]}, root=root)
    assert any("untranslated" in p and "Likely mistake" in p for p in problems)
    assert any("stale" in p for p in problems)  # the .mo no longer matches


def test_marked_messages_render_in_both_languages_and_leaks_are_found():
    msg = _("{what}: expected shape {expected}, got {got}.", what=_("result"), expected="[2, 3]", got="[3, 2]")
    assert i18n.render(msg, "en") == "result: expected shape [2, 3], got [3, 2]."
    assert i18n.render(msg, "zh") == "结果：形状应为 [2, 3]，得到的是 [3, 2]。"
    assert i18n.leaks(msg, "zh") == []
    assert i18n.leaks(msg + " Some English prose.", "zh") == ["Some English prose."]
    assert i18n.leaks(_("a message nobody translated"), "zh") == ["a message nobody translated"]
    assert i18n.leaks(verbatim("Traceback: learner text stays as is"), "zh") == []


def test_likely_mistake_is_shown_in_both_languages():
    from grading.checks.compare import expect_equal
    from grading.model import CaseResult, CheckFailed

    with pytest.raises(CheckFailed) as failed:
        expect_equal(2, 1, "x", mistakes=[(_("result"), 2)])
    case = CaseResult("c", False, 0.0, failed.value.message, failed.value.mistake)
    assert i18n.render(case.mistake, "zh") == "结果" and "Likely" not in i18n.render(case.message, "en")
    for lang in ("en", "zh"):
        localized = i18n.localize(case, lang)  # the mistake is rendered as a field, and still shown with the message
        assert localized.mistake == i18n.render(_("result"), lang)
        assert i18n.render(localized.full_message, lang).endswith(i18n.render(_("Likely mistake: {mistake}",
                                                                                mistake=_("result")), lang))


def _judge(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "judge.py"), *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, **(env or {})}, timeout=600)


def test_judge_speaks_chinese_with_lang_and_with_the_locale():
    english = {"GRADING_LANG": "", "LANG": "en_US.UTF-8", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": ""}
    proc = _judge("embedding_backward", "--lang", "zh", env=english)  # a wrong stub: statuses, messages, totals
    assert "第 01 章" in proc.stdout and "成绩：" in proc.stdout and "未作答" in proc.stdout, proc.stdout + proc.stderr
    assert "Score:" not in proc.stdout and "Chapter 01" not in proc.stdout and i18n.START not in proc.stdout
    chinese = dict(english, LANG="zh_CN.UTF-8")
    hint = _judge("hint", "lookup", env=chinese)  # the locale alone
    assert "提示：" in hint.stdout and "Hint:" not in hint.stdout, hint.stdout + hint.stderr
    assert "Hint:" in _judge("hint", "lookup", "--lang", "en", env=chinese).stdout  # --lang wins over the locale


def test_check_in_a_chinese_notebook_answers_in_chinese(monkeypatch):
    from grading import notebook

    monkeypatch.delenv("GRADING_LANG", raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("JPY_SESSION_NAME", str(REPO / "notebooks" / "zh" / "01_embeddings.ipynb"))
    assert notebook.check_language() == "zh"
    assert notebook.check_language("en") == "en"
    result = notebook.check("embedding_backward")
    text = repr(result)
    assert "通过" in text and "isolation" not in text, text
    monkeypatch.setenv("JPY_SESSION_NAME", str(REPO / "notebooks" / "01_embeddings.ipynb"))
    monkeypatch.chdir(REPO)
    assert notebook.check_language() == "en"


def test_teacher_files_keep_their_columns_and_feedback_follows_the_language(tmp_path, capsys):
    """A class run in Chinese: feedback, summary and messages in Chinese; gradebook and LMS columns unchanged."""
    import csv
    import json

    from grading.checks.compare import named_mistake
    from grading.model import WRONG, CaseResult, ExerciseResult
    from grading.reports.gradebook import write_class_outputs

    failed = named_mistake(2, [(_("not answered yet"), 2)], expected=1).fail(
        _("{what}: expected {expected}, got {got}{kind}.", what=_("result"), expected="1", got="2", kind=""))
    results = [ExerciseResult("01", "lookup", WRONG, [CaseResult(_("question {id}", id=1), False, 0.0, failed.message,
                                                                 failed.mistake)])]
    rows = {"alice": [i18n.localize(r, "zh") for r in results]}
    book = tmp_path / "grades.csv"
    write_class_outputs(rows, {"01": "Embedding lookup"}, book, json_path=str(tmp_path / "d.json"),
                        feedback_dir=str(tmp_path / "fb"), lms_csv=str(tmp_path / "lms.csv"), lang="zh")
    header = next(csv.reader(book.open(encoding="utf-8")))
    assert header[:2] == ["student", "lookup"] and "percent" in header and "isolation" in header
    assert next(csv.reader((tmp_path / "lms.csv").open(encoding="utf-8")))[0] == "Student"
    feedback = (tmp_path / "fb" / "alice.md").read_text(encoding="utf-8")
    assert "alice 的反馈" in feedback and "可能的错误" in feedback and "答案错误" in feedback, feedback
    assert "Feedback for" not in feedback and i18n.START not in feedback
    data = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert data["students"]["alice"]["exercises"][0]["status"] == "wrong answer"  # machine values stay
    assert "结果：应为 1" in data["students"]["alice"]["exercises"][0]["cases"][0]["message"]
    out = capsys.readouterr().out
    assert "成绩册已写入" in out and "班级汇总" in out and i18n.START not in out
