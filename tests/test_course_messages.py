"""The course's own messages outside the judge (course.py's setup, the course model's progress and errors, the
doctor of `judge.py doctor` and notebook 00) speak Chinese under --lang zh, GRADING_LANG=zh, a Chinese locale or in a
Chinese notebook: gettext domain `course` (lesson_utils/edition.py), read with the standard library alone."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grading import i18n
from lesson_utils import course_model as cm
from lesson_utils import doctor
from tools import messages

REPO = Path(__file__).resolve().parent.parent
LOCALE_VARS = ("GRADING_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG", "JPY_SESSION_NAME")
# What stays as is in Chinese: commands, package and file names, the model's own prompt
ALLOWED = (cm.INSTALL_HINT, cm.REINSTALL_HINT, "scikit-learn", cm.GGUF_NAME, cm.WHEEL_NAME, doctor.PROMPT)


@pytest.fixture
def lang(monkeypatch, tmp_path):
    """Set the course's language the way a user does: lang("zh") with GRADING_LANG, lang("zh", "LANG") by locale."""
    for var in LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)

    def choose(code: str, var: str = "GRADING_LANG") -> None:
        monkeypatch.setenv(var, {"GRADING_LANG": code, "JPY_SESSION_NAME": str(REPO / "notebooks" / code / "00.ipynb")}
                           .get(var, f"{code}_CN.UTF-8" if code == "zh" else "en_US.UTF-8"))
    return choose


def english_prose(text: str) -> list[str]:
    """Runs of English words a Chinese reader would meet (grading/i18n.py's rule), names and paths aside."""
    text = re.sub(r"`[^`]*`", "", text)  # a command to type
    for name in ALLOWED:
        text = text.replace(name, "")
    return [leak for line in text.splitlines() for leak in i18n.leaks(line, "zh")]


def test_the_course_catalog_is_complete_and_compiled():
    """Not skipped when the catalog is missing (tests/test_i18n.py skips a domain without one)."""
    assert messages.check({messages.COURSE: messages.sources()[messages.COURSE]}) == []
    assert (i18n.LOCALE / "zh" / "LC_MESSAGES" / "course.mo").exists()


@pytest.mark.parametrize("var", ["GRADING_LANG", "LANG", "JPY_SESSION_NAME"])
def test_the_doctor_speaks_chinese(lang, var, capsys):
    lang("zh", var)
    assert doctor.print_doctor(load_model=False)
    zh = capsys.readouterr().out
    lang("en", var)
    doctor.print_doctor(load_model=False)
    en = capsys.readouterr().out
    assert "一切就绪。" in zh and "[正常] torch 构建" in zh and "Everything is ready." in en, zh
    assert not english_prose(zh), zh
    assert len(zh.splitlines()) == len(en.splitlines())


def test_a_missing_model_is_explained_in_chinese_with_the_same_command(lang, monkeypatch, capsys):
    lang("zh")
    monkeypatch.setattr(cm.importlib.util, "find_spec", lambda name: None)
    assert not doctor.print_doctor(load_model=False)
    out = capsys.readouterr().out
    assert "[失败] 课程模型文件" in out and "没有安装课程模型" in out and cm.INSTALL_HINT in out, out
    assert "先解决上面标着 失败 的各行" in out and not english_prose(out.replace(sys.executable, "")), out


def test_a_truncated_model_file_is_named_in_chinese_with_its_numbers(lang, tmp_path):
    bad = tmp_path / cm.GGUF_NAME
    bad.write_bytes(b"\0" * 1000)
    for code, words in (("zh", "有 1,000 字节，应为 98,362,432"), ("en", "is 1,000 bytes, expected 98,362,432")):
        lang(code)
        with pytest.raises(cm.CourseModelError) as err:
            cm.verify_gguf(bad)
        assert words in str(err.value) and cm.REINSTALL_HINT in str(err.value), str(err.value)


def test_course_py_speaks_chinese_with_the_standard_library_alone():
    """course.py runs before .venv exists: -S leaves out site-packages (no Babel, no torch), --lang zh anywhere."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import course; "
            "sys.argv[1:] = course.take_lang(['setup', '--lang', 'zh']); "
            "print(sys.argv[1:], course._('Setup finished in {seconds:.0f} s.', seconds=12.4)); "
            "print(course._('CPU build (no CUDA)'), 'babel' in sys.modules, 'torch' in sys.modules)")
    env = {**{k: v for k, v in os.environ.items() if k not in LOCALE_VARS}, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-S", "-c", code, str(REPO)], capture_output=True, text=True, env=env,
                          timeout=60, encoding="utf-8")
    assert done.stdout.splitlines() == ["['setup'] 安装完成，用时 12 秒。", "CPU 版（没有 CUDA） False False"], \
        done.stdout + done.stderr


def test_course_py_setup_messages_follow_the_locale(lang, monkeypatch, capsys):
    sys.path.insert(0, str(REPO))
    import course

    lang("zh", "LANG")
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        if "--index-url" in cmd:
            raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(course, "run", fake_run)
    monkeypatch.setattr(course.sys, "platform", "linux")
    course.install_torch(["pip", "install"])
    out = capsys.readouterr().out
    assert "（CPU 版）" in out and "无法使用 PyTorch 的 CPU 索引，改从 PyPI 安装 torch" in out, out
    assert not english_prose(out.replace(course.TORCH_CPU_INDEX, "")), out
    line = course.torch_build(Path(sys.executable))
    assert line.startswith("torch ") and ("CPU 版（没有 CUDA）" in line or "CUDA" in line), line
