"""The judge grades honestly: hostile, crashing or hanging learner code never passes and never stops it."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from answers import solution_source

from grading import i18n, model
from grading.engine import sandbox, scheduler

REPO = Path(__file__).resolve().parent.parent
SOLUTION = solution_source("ch01_embeddings")  # most tests here grade it; a hand-out has none: skip there
NO_MODEL = "embedding_backward"  # a chapter 01 exercise whose cases do not load the course model


def student(tmp_path: Path, body: str, name: str = "ch01_embeddings.py") -> Path:
    """An exercises folder whose chapter 01 file is the reference solution with `body` appended."""
    folder = tmp_path / "exercises"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(SOLUTION + "\n" + textwrap.dedent(body), encoding="utf-8")
    return folder


def result(results, name):
    return next(r for r in results if r.name == name)


def grade_backward(tmp_path, body, **kw):
    """The result, checked to reach a Chinese reader entirely from the catalog (once chapter 01 has one), then in
    English: every crashing, hanging or wrong answer below doubles as a test of the translations."""
    r = result(scheduler.grade(student(tmp_path, body), NO_MODEL, lang=i18n.MARKED, **kw), NO_MODEL)
    if i18n.has_catalog("ch01_embeddings"):
        assert i18n.untranslated(r, "zh") == [], i18n.untranslated(r, "zh")
    return i18n.localize(r, "en")


def test_reference_solution_passes(tmp_path):
    assert grade_backward(tmp_path, "").status == model.PASSED


def test_wrong_answer_names_the_mistake(tmp_path):
    r = grade_backward(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            g = torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
            g[ids.reshape(-1)] = grad_out.reshape(-1, grad_out.shape[-1])
            return g
    """)
    assert r.status == model.WRONG
    failed = [c for c in r.cases if not c.passed]
    assert failed and "SUM" in failed[0].message and "index" in failed[0].message
    assert any(c.passed for c in r.cases)  # cases without repeated ids still pass


def test_exception_shows_only_the_learners_frames(tmp_path):
    r = grade_backward(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            return helper(ids)

        def helper(ids):
            raise ValueError("my own bug")
    """)
    assert r.status == model.ERROR
    msg = r.cases[0].message
    assert "my own bug" in msg and "helper" in msg and "grading" not in msg and "learner_process.py" not in msg


def test_endless_loop_times_out_and_the_rest_is_still_graded(tmp_path):
    folder = student(tmp_path, """
        def row_byte_offset(i, d, dtype):
            while True:
                pass
    """)
    results = scheduler.grade(folder, "01", time_limit_s=3)
    assert result(results, "row_byte_offset").status == model.TIMEOUT
    assert result(results, "embedding_backward").status == model.PASSED
    assert result(results, "quiz01").status == model.PASSED


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)", "raise KeyboardInterrupt"])
def test_exiting_never_counts_as_a_pass(tmp_path, exit_call):
    r = grade_backward(tmp_path, f"""
        import os, sys
        def embedding_backward(grad_out, ids, vocab_size):
            {exit_call}
    """)
    assert r.status == model.ERROR


def test_a_crash_names_the_learners_line_it_stopped_at(tmp_path):
    r = grade_backward(tmp_path, """
        import os
        def embedding_backward(grad_out, ids, vocab_size):
            os.abort()  # SIGABRT, as native code out of memory does
    """)
    assert r.status == model.ERROR and "SIGABRT" in r.message, r.message
    line = (SOLUTION + "\n").count("\n") + 4  # the fourth line of the appended body
    assert f"It stopped at line {line} of your file (os.abort()  # SIGABRT" in r.message, r.message


def test_memory_hog_is_stopped(tmp_path):
    r = grade_backward(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            hoard = []
            while True:
                hoard.append(bytearray(200_000_000))
    """, memory_mb=3000)
    assert r.status == model.ERROR
    assert "memory" in r.cases[0].message.lower()


def test_printing_a_pass_patching_torch_and_fake_equality_do_not_pass(tmp_path):
    r = grade_backward(tmp_path, """
        import torch

        class AlwaysEqual:
            def __eq__(self, other):
                return True

        def embedding_backward(grad_out, ids, vocab_size):
            print("✓ passed  6/6 cases  Score: 5/5 exercises passed.")
            torch.allclose = lambda *a, **k: True
            torch.equal = lambda *a, **k: True
            return AlwaysEqual()
    """)
    assert r.status == model.ERROR
    assert "cannot read" in r.cases[0].message


def test_tensor_subclass_is_refused(tmp_path):
    r = grade_backward(tmp_path, """
        class Sneaky(torch.Tensor):
            def __eq__(self, other):
                return True

        def embedding_backward(grad_out, ids, vocab_size):
            return torch.zeros(vocab_size, grad_out.shape[-1]).as_subclass(Sneaky)
    """)
    assert r.status == model.ERROR


def test_patched_checks_in_the_learner_process_change_nothing(tmp_path):
    r = grade_backward(tmp_path, """
        import grading.checks.compare, grading.model
        grading.checks.compare.expect_tensor = lambda *a, **k: None
        grading.model.Case.check = lambda *a, **k: None

        def embedding_backward(grad_out, ids, vocab_size):
            return torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
    """)
    # Inside bubblewrap those modules are not even there (an import error); without it, patching them is useless.
    assert r.status in (model.WRONG, model.ERROR) and not any(c.passed for c in r.cases)


def test_importing_the_solutions_is_refused(tmp_path):
    r = grade_backward(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            import importlib.util
            spec = importlib.util.spec_from_file_location("s", r"%s")
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod.embedding_backward(grad_out, ids, vocab_size)
    """ % (REPO / "solutions" / "ch01_embeddings.py"))
    assert r.status == model.ERROR
    assert "is not allowed" in r.cases[0].message or "No such file" in r.cases[0].message


def test_broken_file_is_reported_for_every_exercise(tmp_path):
    results = scheduler.grade(student(tmp_path, "def oops(:\n"), NO_MODEL)
    assert results[0].status == model.ERROR and "SyntaxError" in results[0].cases[0].message


def test_exit_at_import_time_is_an_error(tmp_path):
    results = scheduler.grade(student(tmp_path, "import sys\nsys.exit(0)\n"), NO_MODEL)
    assert results[0].status == model.ERROR


def test_untouched_stub_is_not_attempted():
    results = scheduler.grade(REPO / "exercises", NO_MODEL)
    assert results[0].status == model.NOT_ATTEMPTED


def test_quiz_wrong_answer_is_explained(tmp_path):
    folder = student(tmp_path, "QUIZ = {1: 'a', 2: 'a', 3: 'c', 4: None}\n")
    r = result(scheduler.grade(folder, "quiz01"), "quiz01")
    assert r.status == model.WRONG
    assert [c.passed for c in r.cases][:4] == [False, True, True, False]  # later questions: not answered
    assert "Reread" in r.cases[0].message


def run_judge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "judge.py"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_reports_and_exit_codes(tmp_path):
    ok = run_judge("embedding_backward", "--solutions", "--json", str(tmp_path / "r.json"),
                   "--junit", str(tmp_path / "r.xml"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["passed"] == data["total"] == 1 and len(data["exercises"][0]["cases"]) >= 5
    suite = ET.parse(tmp_path / "r.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) >= 5 and suite.get("failures") == "0"
    bad = run_judge("embedding_backward")
    assert bad.returncode == 1 and "not attempted" in bad.stdout


def test_hint_and_unknown_names():
    hint = run_judge("hint", "embedding_backward")
    assert hint.returncode == 0 and "Hint:" in hint.stdout
    unknown = run_judge("no_such_exercise")
    assert unknown.returncode != 0 and "No chapter or exercise" in (unknown.stdout + unknown.stderr)
    no_quiz = run_judge("quiz", "99")
    assert no_quiz.returncode == 2 and "No quiz for 99" in no_quiz.stdout and "04" in no_quiz.stdout


def test_a_folder_without_the_files_says_so_once_and_still_writes_the_reports(tmp_path):
    """A wrong --source is told up front (not only as one 'does not exist' per exercise), and the reports are still
    written: a submission with no files is 0 points in an autograder, not a missing result."""
    empty = tmp_path / "work"
    empty.mkdir()
    proc = run_judge("00", "--source", str(empty), "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.count("holds none of the files to grade (ch00_pipeline.py)") == 1, proc.stdout
    assert json.loads((tmp_path / "r.json").read_text())["passed"] == 0
    graded = run_judge("00", "--solutions")
    assert "holds none of the files" not in graded.stdout


def test_class_gradebook(tmp_path):
    klass = tmp_path / "class"
    good = student(klass / "alice", "")
    shutil.copytree(REPO / "exercises", klass / "alice" / "ex_orig")  # other files are ignored
    student(klass / "bob", """
        def embedding_backward(grad_out, ids, vocab_size):
            return torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
        QUIZ = {1: 'a', 2: 'a', 3: 'a', 4: 'a'}
    """)
    student(klass / "mallory", """
        import os
        print("Score: 99/99 exercises passed.")
        os._exit(0)
    """)
    assert good.is_dir()
    book = tmp_path / "grades.csv"
    proc = run_judge("--class", str(klass), "--trusted-class", "--gradebook", str(book), "embedding_backward")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["student"]: r for r in csv.DictReader(book.open())}
    assert set(rows) == {"alice", "bob", "mallory"}
    assert rows["alice"]["embedding_backward"] == "1" and rows["alice"]["passed"] == "1"
    assert rows["bob"]["embedding_backward"] == "0"
    assert rows["mallory"]["embedding_backward"] == "0" and rows["mallory"]["passed"] == "0"


def test_judge_check_proves_every_stub_fails_and_every_solution_passes():
    proc = run_judge("check")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "All stubs fail and all solutions pass." in proc.stdout


def test_forged_result_files_are_not_trusted(tmp_path):
    folder = student(tmp_path, """
        import os, torch
        for name in ["lookup", "lookup_onehot", "row_byte_offset", "embedding_backward", "quiz01"]:
            torch.save([], f"{name}.pt")
        os._exit(0)
    """)
    results = scheduler.grade(folder, "01")
    assert not any(r.passed for r in results)


def test_reading_solutions_through_another_program_is_refused(tmp_path):
    r = grade_backward(tmp_path, """
        import subprocess
        def embedding_backward(grad_out, ids, vocab_size):
            subprocess.run(["cat", r"%s"], check=True)
            raise ValueError("unreachable")
    """ % (REPO / "solutions" / "ch01_embeddings.py"))
    assert r.status == model.ERROR and "not allowed" in r.cases[0].message


def test_changing_inputs_in_place_is_named_and_does_not_leak_into_later_cases(tmp_path):
    folder = student(tmp_path, """
        def lookup(E, ids):
            rows = E[ids].clone()
            E.zero_()  # vandalise the shared table of the course model after use
            return rows
    """)
    results = scheduler.grade(folder, "01")
    lookup = i18n.localize(result(results, "lookup"), "en")
    if sandbox.backend().name == "fork" and sys.platform.startswith("linux"):  # the course's E is read-only there
        assert lookup.status == model.ERROR and "read-only while you are graded" in lookup.message
        assert "(E.zero_()  # vandalise" in lookup.message  # the line the process was running
    else:
        assert lookup.status == model.WRONG  # right rows, but the caller's table changed (issue 27)
        assert "changed `E` in place" in lookup.cases[0].message
    assert result(results, "lookup_onehot").status == model.PASSED  # still sees the real table


def test_importing_the_checks_is_refused(tmp_path):
    r = grade_backward(tmp_path, """
        def embedding_backward(grad_out, ids, vocab_size):
            import grading.checks.ch01_embeddings as checks  # the judge's references live here
            return checks.CHAPTER
    """)
    # Inside bubblewrap the checks are not there at all; with the audit-hook fallback reading them is refused.
    assert r.status == model.ERROR
    assert "not allowed" in r.cases[0].message or "No module named 'grading.checks'" in r.cases[0].message


def test_hanging_before_the_clock_starts_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(scheduler, "SETUP_TIMEOUT_S", 5.0)
    folder = student(tmp_path, """
        import copy
        def forever(*args, **kwargs):
            while True:
                pass
        copy.deepcopy = forever  # the learner process copies each case's inputs before the clock starts (the
        # zygote makes the copies of the cases it watches, so an exercise with unwatched cases: the stretch)
    """)
    r = i18n.localize(result(scheduler.grade(folder, "embedding_autograd", time_limit_s=10), "embedding_autograd"),
                      "en")
    assert r.status == model.TIMEOUT and "no progress" in r.cases[0].message


def test_a_function_that_calls_a_timed_out_one_gets_a_short_limit_and_names_it(tmp_path, monkeypatch):
    """top_p_filter and sample_next_token call the learner's endless softmax: each is stopped after the short
    limit and its message names softmax. min_p_filter only has a local variable called softmax (the syntax tree
    cannot tell): it still runs, and passes."""
    monkeypatch.setattr(scheduler, "DEPENDENT_TIMEOUT_S", 2.0)
    folder = tmp_path / "exercises"
    folder.mkdir()
    text = (REPO / "solutions" / "ch04_sampling.py").read_text(encoding="utf-8")
    (folder / "ch04_sampling.py").write_text(text + textwrap.dedent("""

        def softmax(logits, dim=-1):
            while True:
                pass

        def min_p_filter(logits, min_p):
            softmax = lambda x: torch.softmax(x.float(), dim=-1).to(x.dtype)  # not the learner's softmax
            probs = softmax(logits)
            return logits.masked_fill(probs < min_p * probs.amax(dim=-1, keepdim=True), float("-inf"))
    """), encoding="utf-8")
    results = scheduler.grade(folder, "04", time_limit_s=6)
    assert result(results, "softmax").status == model.TIMEOUT
    for name in ("top_p_filter", "sample_next_token"):
        r = result(results, name)
        assert r.status == model.TIMEOUT and "calls your softmax, which timed out above" in r.message, (name, r.message)
        assert "Stopped after 2 s" in r.message
    assert result(results, "min_p_filter").passed, result(results, "min_p_filter").message
    assert result(results, "apply_temperature").passed and result(results, "greedy_generate").passed


def test_exercises_sharing_a_child_start_from_torchs_defaults(tmp_path):
    """Exercises whose inputs are private copies run in one child; one that switches autograd off or changes the
    default dtype does not change what the next one sees."""
    folder = student(tmp_path, """
        _row_byte_offset = row_byte_offset

        def row_byte_offset(i, d, dtype):
            torch.set_grad_enabled(False)
            torch.set_default_dtype(torch.float64)
            return _row_byte_offset(i, d, dtype)
    """)
    results = scheduler.grade(folder, "01")
    assert all(r.passed for r in results), [(r.name, r.status, r.message) for r in results if not r.passed]


def test_a_child_that_exits_mid_chapter_leaves_the_other_exercises_graded(tmp_path):
    folder = student(tmp_path, """
        import os
        def row_byte_offset(i, d, dtype):
            os._exit(0)
    """)
    results = scheduler.grade(folder, "01")
    assert result(results, "row_byte_offset").status == model.ERROR
    assert all(r.passed for r in results if r.name != "row_byte_offset")


def test_an_import_that_times_out_is_reported_as_such_for_every_exercise(tmp_path, monkeypatch):
    """Not as "calls your row_byte_offset, which timed out" in a later child: nothing ran, the import never finished.
    (lookup_onehot runs in a child of its own, after the one whose import timed out.)"""
    monkeypatch.setattr(scheduler, "IMPORT_TIMEOUT_S", 3.0)
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "ch01_embeddings.py").write_text("while True:\n    pass\n" + SOLUTION + textwrap.dedent("""
        _lookup_onehot = lookup_onehot

        def lookup_onehot(E, ids):
            row_byte_offset(0, 1, torch.float32)
            return _lookup_onehot(E, ids)
    """), encoding="utf-8")
    results = scheduler.grade(folder, "01")
    assert all(r.status == model.TIMEOUT and "Importing your file took more than" in r.message for r in results), \
        [(r.name, r.message) for r in results]


def test_absurdly_nested_code_is_a_named_error_not_a_judge_crash(tmp_path):
    """The judge reads the file's syntax tree (which function calls which); 200,000 chained additions overflow
    the parser's recursion, and must cost that student a named error, not the class run."""
    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / "ch01_embeddings.py").write_text(SOLUTION + "\ny = 1" + " + 1" * 200_000 + "\n", encoding="utf-8")
    results = scheduler.grade(folder, "01")
    assert all(r.status == model.ERROR for r in results), [(r.name, r.status) for r in results]


def test_a_callback_that_raises_is_raised_not_lost(tmp_path):
    """A failing on_done (a report that cannot be written) reaches the caller as itself, not as a KeyError
    about a lost student, and the run still ends."""
    def on_done(i, src, results):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        scheduler.grade_many([REPO / "solutions", REPO / "solutions"], "quiz01", on_done=on_done)


def test_an_untouched_stub_runs_once_per_class_and_a_touched_one_runs_for_itself(tmp_path, monkeypatch):
    """A file byte for byte the course's stub is the course's code: its reply is reused for every student who
    handed it in; one changed byte (a comment) makes it the student's own file, run in its own process."""
    stub = (REPO / "exercises" / "ch04_sampling.py").read_text(encoding="utf-8")
    folders = []
    for k, text in enumerate([stub, stub, stub, stub + "# mine\n"]):
        folder = tmp_path / f"s{k}" / "exercises"
        folder.mkdir(parents=True)
        (folder / "ch04_sampling.py").write_text(text, encoding="utf-8")
        folders.append(folder)
    runs = []
    real = scheduler.run_file
    monkeypatch.setattr(scheduler, "run_file", lambda *a, **k: runs.append(a[3]) or real(*a, **k))
    graded = scheduler.grade_many(folders, "04", workers=1)
    assert len(runs) == 2 and runs[-1] == folders[3] / "ch04_sampling.py"
    assert [[r.status for r in res] for res in graded[:3]] == [[r.status for r in graded[3]]] * 3
    assert all(r.status == model.NOT_ATTEMPTED for res in graded for r in res)
