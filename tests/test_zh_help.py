"""`python judge.py --help` speaks Chinese under --lang zh or a Chinese locale (grading/usage.py): the usage text
and every option's help, an option added without its translation included."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from grading import i18n, usage

REPO = Path(__file__).resolve().parent.parent
LOCALE_VARS = ("GRADING_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
FIX = " (then python -m tools.messages update, translate the new entries of course.po, compile)"
# What stays as is: option names, metavars and choices (FILE, {en,zh}), paths and file names, product names
CODE = re.compile(r"GitHub Classroom|--?[\w-]+|\{[^}]*\}|\b[A-Z][A-Z_]+\b|\S*[/.<>_]\S*")


def _help(*env: tuple[str, str]) -> str:
    base = {**os.environ, "GRADING_LANG": "", "LANG": "en_US.UTF-8", "LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "",
            "PYTHONIOENCODING": "utf-8"}  # a Windows pipe would otherwise be cp1252
    done = subprocess.run([sys.executable, str(REPO / "judge.py"), "--help"], capture_output=True, text=True,
                          cwd=REPO, env=base | dict(env), timeout=120, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_in_chinese_has_no_english_sentence():
    zh = _help(("LANG", "zh_CN.UTF-8"))
    assert zh.startswith("用法：judge.py") and "评测课程练习。" in zh and "显示这条帮助信息并退出" in zh, zh
    options = zh[zh.index("位置参数"):]  # every option's help, whoever added the option
    english = [leak for line in options.splitlines() for leak in i18n.leaks(CODE.sub("", line), "zh")]
    assert not english, f"options with English help in Chinese mode (add them to grading/usage.py): {english}"
    for text in usage.TEXTS:
        assert text not in zh


def test_help_in_english_is_unchanged():
    en = _help(("GRADING_LANG", "en"))
    assert en.startswith("usage: judge.py") and "Grade the course exercises." in en and "用法" not in en
    flat = " ".join(en.split())
    stale = [t[:60] for t in usage.TEXTS if " ".join(t.split()) not in flat]
    assert not stale, (f"grading/usage.py copies judge.py's help texts to translate them; these changed: {stale}: "
                       f"copy the new ones there{FIX}")


def test_course_py_help_follows_the_language():
    sys.path.insert(0, str(REPO))
    import course

    assert usage.COURSE_HELP == course.__doc__, f"grading/usage.py COURSE_HELP copies course.py's docstring{FIX}"
    base = {**{k: v for k, v in os.environ.items() if k not in LOCALE_VARS}, "PYTHONIOENCODING": "utf-8"}
    for env, words in (({"LANG": "zh_CN.UTF-8"}, "在 Linux、macOS 和 Windows 上安装并运行课程"),
                       ({"GRADING_LANG": "en", "LANG": "zh_CN.UTF-8"}, "Set up the course and run it")):
        done = subprocess.run([sys.executable, "-S", str(REPO / "course.py"), "help"], capture_output=True,
                              text=True, env=base | env, timeout=60, encoding="utf-8")
        assert done.returncode == 0 and done.stdout.startswith(words), done.stdout + done.stderr
