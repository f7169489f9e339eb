"""The course speaks the notebook's language: show_quiz() picks it by the rule check() follows
(lesson_utils/edition.py language, grading/notebook.py check_language), so a Chinese notebook's quiz is Chinese."""
from __future__ import annotations

from pathlib import Path

import pytest

from grading import i18n, show_quiz
from grading.catalog import find_chapter, load_chapters
from lesson_utils import edition

REPO = Path(__file__).resolve().parent.parent
LOCALE_VARS = ("GRADING_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture
def english_shell(monkeypatch, tmp_path):
    """An English locale, no GRADING_LANG, outside any notebook."""
    for var in LOCALE_VARS + ("JPY_SESSION_NAME",):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def _in_notebook(monkeypatch, lang: str) -> None:
    folder = REPO / "notebooks" / ("zh" if lang == "zh" else "")
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "04b_decoding.ipynb"))


def test_show_quiz_in_a_chinese_notebook_prints_chinese(english_shell, capsys):
    _in_notebook(english_shell, "zh")
    show_quiz("04")
    zh = capsys.readouterr().out
    _in_notebook(english_shell, "en")
    show_quiz("04")
    en = capsys.readouterr().out
    assert "测验" in zh and "quiz: answer in" not in zh, zh
    assert "quiz: answer in" in en and "测验" not in en, en
    assert i18n.START not in zh
    chapter = find_chapter(load_chapters(), "04")
    for q in chapter.quiz:  # every question and option shown in its translation, none in English
        for text in (q.text, *q.choices.values()):
            english, chinese = i18n.render(text, "en"), i18n.render(text, "zh")
            assert chinese in zh and (english == chinese or english not in zh), english
    shape = [[line.split(maxsplit=1)[0] for line in text.splitlines()[1:] if line] for text in (zh, en)]
    assert shape[0] == shape[1] and "5." in shape[0]  # the same numbered questions and lettered options


def test_show_quiz_lang_and_grading_lang_win_over_the_notebook(english_shell, capsys):
    _in_notebook(english_shell, "zh")
    show_quiz("04", lang="en")
    assert "quiz: answer in" in capsys.readouterr().out
    english_shell.setenv("GRADING_LANG", "en")
    show_quiz("04")
    assert "quiz: answer in" in capsys.readouterr().out


@pytest.mark.parametrize("env, notebook, expected", [
    ({}, None, "en"),
    ({}, "zh", "zh"),
    ({}, "en", "en"),
    ({"LANG": "zh_CN.UTF-8"}, None, "zh"),
    ({"LANG": "zh_CN.UTF-8"}, "en", "zh"),  # notebooks/ (not notebooks/en/) names no edition: the locale speaks
    ({"GRADING_LANG": "zh"}, "en", "zh"),
    ({"GRADING_LANG": "en", "LANG": "zh_CN.UTF-8"}, "zh", "en"),
    ({"LANGUAGE": "zh_TW:en"}, None, "zh"),
])
def test_the_course_language_is_the_one_check_answers_in(english_shell, env, notebook, expected):
    from grading.notebook import check_language

    for var, value in env.items():
        english_shell.setenv(var, value)
    if notebook:
        _in_notebook(english_shell, notebook)
    assert edition.language() == check_language() == expected
    assert edition.language("en") == check_language("en") == "en"


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="choose one of en, zh"):
        edition.language("fr")
