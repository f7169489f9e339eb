"""check() in a notebook grades like the judge, on a warm worker, and renders as a compact table."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from answers import solution_source

from grading import check
from grading.engine import sandbox
from grading.notebook import CheckResult

REPO = Path(__file__).resolve().parent.parent
SOLUTION = solution_source("ch01_embeddings")  # most tests here grade it; a hand-out has none: skip there


def learner(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "exercises"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ch01_embeddings.py").write_text(SOLUTION + "\n" + textwrap.dedent(body), encoding="utf-8")
    return folder


def test_a_correct_answer_passes_and_renders(tmp_path):
    r = check("embedding_backward", source=learner(tmp_path, ""))
    assert isinstance(r, CheckResult) and r.passed is True
    assert r.isolation == sandbox.detect().name
    html = r._repr_html_()
    assert "<table" in html and "embedding_backward" in html and "✗" not in html and "✓" in html
    assert "embedding_backward" in repr(r) and "1/1 passed" in repr(r)


def test_a_wrong_answer_shows_the_first_failure_and_the_named_mistake(tmp_path):
    r = check("embedding_backward", source=learner(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            g = torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
            g[ids.reshape(-1)] = grad_out.reshape(-1, grad_out.shape[-1])
            return g
    """))
    assert r.passed is False
    text, html = repr(r), r._repr_html_()
    assert "First failure" in text and "expected" in text and "Likely mistake" in text
    assert "First failure" in html and "Likely mistake" in html and "✗" in html


def test_edits_are_picked_up_and_warm_checks_are_quick(tmp_path):
    folder = learner(tmp_path, "")
    check("embedding_backward", source=folder)  # warm: the worker and the inputs exist now
    (folder / "ch01_embeddings.py").write_text(SOLUTION + "\ndef embedding_backward(*a):\n    raise NotImplementedError\n")
    start = time.perf_counter()
    r = check("embedding_backward", source=folder)
    warm = time.perf_counter() - start
    assert not r.passed and r.results[0].status == "not attempted"
    assert warm < 15, f"a warm check took {warm:.1f} s"  # about 0.2 s on an idle machine; generous under load


def test_an_unknown_name_is_a_clear_error():
    with pytest.raises(ValueError, match="No chapter or exercise called"):
        check("no_such_exercise")


def test_a_missing_folder_and_a_memory_limit_that_is_none_are_clear_errors(tmp_path):
    """A typo in source= would grade every exercise as "not attempted"; a negative memory_mb would be no limit."""
    with pytest.raises(FileNotFoundError, match="No folder .*give check\\(\\) the folder"):
        check("00", source=tmp_path / "no_such_folder")
    for bad in (-5, 0, 5, 512.0):
        with pytest.raises(ValueError, match="memory_mb is megabytes, a whole number of at least 64"):
            check("00", memory_mb=bad)
    with pytest.raises(FileNotFoundError, match="没有文件夹"):
        check("00", source=tmp_path / "no_such_folder", lang="zh")
    empty = tmp_path / "my_work"
    empty.mkdir()
    res = check("00", source=empty)  # a folder without the files: said above the table, not only "not attempted"
    says = f"{empty} holds none of the files to grade (ch00_pipeline.py)"
    assert repr(res).startswith(says) and says in res._repr_html_() and not res.passed
    assert check("00").note == ""  # the course's exercises/ has every stub


def test_judge_progress_shows_status_and_what_is_left():
    done = subprocess.run([sys.executable, str(REPO / "judge.py"), "progress", "01"], capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Chapter 01" in done.stdout and "left:" in done.stdout and "Course: 0/" in done.stdout
