"""The students' hand-out (tools/handout.py): no file in it holds an answer, and it works as handed out.

The hand-out is built once from the last commit into a temporary folder. Its tests and its judge run with this
checkout's Python (a new environment would take minutes), from the hand-out's folder, so they import the
hand-out's own grading/, lesson_utils/ and exercises/ (checked below). Its notebooks and the tests that do not use
the answers are byte-identical to the course's, which the course's own test command runs, so they are not run a
second time here.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from answers import HANDOUT_MARKER, skip_module_in_handout

skip_module_in_handout()  # the builder and the answers it scans for are not part of a hand-out

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import answer_scan  # noqa: E402
import handout  # noqa: E402

ENV = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GRADING_"))} | {
    "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> handout.Handout:
    return handout.build_handout(tmp_path_factory.mktemp("handout") / "course")


@pytest.fixture(scope="module")
def index():
    return answer_scan.answer_index(REPO)


def _renamed_copy(source: str, function: str) -> str:
    """`function` from `source` as a student could paste it: every name changed, new docstring, no type hints."""
    tree = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == function)

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.copy_location(ast.Name(id=f"my_{node.id}", ctx=node.ctx), node)

        def visit_arg(self, node):
            return ast.copy_location(ast.arg(arg=f"my_{node.arg}"), node)

    tree = Rename().visit(tree)
    tree.name, tree.returns = "nucleus", None
    tree.body.insert(0, ast.Expr(ast.Constant("My own nucleus filter.")))
    return ast.unparse(ast.fix_missing_locations(tree))


def test_the_scan_finds_a_renamed_copy_wherever_it_is(tmp_path, index):
    solution = (REPO / "solutions" / "ch04_sampling.py").read_text(encoding="utf-8")
    copy = _renamed_copy(solution, "top_p_filter")
    assert "my_logits" in copy and "top_p_filter" not in copy
    cell = {"cell_type": "code", "source": copy.splitlines(keepends=True), "outputs": [], "metadata": {},
            "execution_count": 1}
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                   "nbformat_minor": 5}), encoding="utf-8")
    (tmp_path / "helper.py").write_text("import torch\n\n" + copy + "\n", encoding="utf-8")
    (tmp_path / "test_x.py").write_text(f"LEARNER = {copy!r}\n", encoding="utf-8")  # learner code in a string
    (tmp_path / "notes.md").write_text(f"# Notes\n\n```python\n{copy}\n```\n", encoding="utf-8")
    (tmp_path / "stub.py").write_text((REPO / "exercises" / "ch04_sampling.py").read_text(encoding="utf-8"),
                                      encoding="utf-8")
    leaks = answer_scan.find_leaks(tmp_path, index)
    assert sorted((leak.file.split("#")[0], leak.answer) for leak in leaks) == [
        (name, "solutions/ch04_sampling.py:top_p_filter")
        for name in ("helper.py", "nb.ipynb", "notes.md", "test_x.py")], leaks


def test_a_mutant_body_is_allowed_only_in_the_judges_checks():
    leak = answer_scan.Leak
    mutant, solution = "mutants/ch04_sampling/softmax__no_shift.py:softmax", "solutions/ch04_sampling.py:softmax"
    assert handout.forbidden([leak("grading/checks/ch01_embeddings/named_cases.py", 3, mutant),
                              leak("grading/checks/ch04_sampling/softmax.py", 3, mutant)]) == []
    refused = [leak("grading/checks/ch04_sampling/softmax.py", 3, solution), leak("notebooks/04a.ipynb#cell 3", 1, mutant),
               leak("lesson_utils/sampling_demo.py", 9, mutant), leak("grading/engine/checker.py", 9, mutant)]
    assert handout.forbidden(refused) == refused


def test_the_handout_holds_no_answer(built, index):
    names = {p.relative_to(built.dest).parts[0] for p in built.dest.iterdir()}
    assert not names & {"solutions", "mutants", ".git", ".ci", "templates"}, names
    assert not {"mutants.py", "handout.py", "answer_scan.py"} & {p.name for p in (built.dest / "tools").iterdir()}
    leaks = handout.forbidden(answer_scan.find_leaks(built.dest, index))
    assert not leaks, "\n".join(map(str, leaks))
    mutant_names = {p.name for p in (REPO / "mutants").rglob("*.py")}
    assert not [p for p in built.dest.rglob("*.py") if p.name in mutant_names]


def test_the_handout_has_what_a_student_needs(built):
    dest = built.dest
    readme = (dest / "README.md").read_text(encoding="utf-8")
    assert "{" not in readme.split("\n---\n")[0], "a template field was not filled in"
    for needed in ("make lab", "python course.py lab", "check(", "python judge.py", "exercises/", "make test",
                   "Submit"):
        assert needed in readme.split("\n---\n")[0], needed
    committed_readme = subprocess.run(["git", "show", f"{built.commit}:README.md"], cwd=REPO, capture_output=True,
                                      check=True).stdout.decode("utf-8")
    # the course's README follows the students' part, without its sentence on the reference answers
    assert readme.endswith("\n---\n\n" + handout.handout_readme("README.md", committed_readme))
    zh = (dest / "README.zh.md").read_text(encoding="utf-8")
    assert zh.index("## 4. 提交") < zh.index(handout.STUDENTS_PART_END) and "{" not in zh.split("\n---\n")[0]
    assert "参考答案在 `solutions/`" not in zh and "are in `solutions/`" not in readme
    ignored = [p for p in (dest / ".gitignore").read_text(encoding="utf-8").splitlines() if not p.startswith("#")]
    assert ".venv/" in ignored and "__pycache__/" in ignored
    assert not [p for p in ignored if "exercises" in p or (p.endswith(".ipynb") and "-mine" not in p)], (
        "a student's work is ignored")
    for needed in ("notebooks/*-mine.ipynb", "/site/_build/", "/site/node_modules/"):
        assert needed in ignored, needed
    assert not (dest / ".github").exists(), "the course's workflows run long jobs on every student push"
    marker = json.loads((dest / HANDOUT_MARKER).read_text(encoding="utf-8"))
    assert marker["built_from"] == built.commit and "solutions/" in marker["left_out"]
    course = subprocess.run(["git", "ls-files", "exercises", "notebooks", "lesson_utils", "grading", "judge.py"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    assert course and set(course) <= set(built.files)
    for rel in course:  # the course's own files, as committed
        committed = subprocess.run(["git", "show", f"{built.commit}:{rel}"], cwd=REPO, capture_output=True).stdout
        assert (dest / rel).read_bytes() == committed, rel


def test_the_handouts_python_imports_the_handouts_code(built):
    code = "import grading, lesson_utils, exercises; print(grading.__file__, lesson_utils.__file__, exercises.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=built.dest, env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert all(Path(f).is_relative_to(built.dest) for f in done.stdout.split()), done.stdout


def test_the_handouts_tests_run_there_and_say_why_they_skip(built):
    """Every test module imports in the hand-out; those that use the answers run there and skip with the hand-out's
    reason. The others are the course's own files, unchanged (checked), which the course's suite runs as they are:
    a second run here would take the whole suite's time again."""
    tests = sorted(p.name for p in (built.dest / "tests").glob("test_*.py"))
    uses_answers = [name for name in tests if any(
        word in (built.dest / "tests" / name).read_text(encoding="utf-8")
        for word in ("solutions", "mutants", "from answers import"))]
    for name in set(tests) - set(uses_answers):
        assert (built.dest / "tests" / name).read_bytes() == (REPO / "tests" / name).read_bytes(), name
    collect = subprocess.run([sys.executable, "-m", "pytest", "tests", "--collect-only", "-q", "-p", "no:cacheprovider"],
                             cwd=built.dest, env=ENV, capture_output=True, text=True, timeout=600)
    assert collect.returncode == 0, collect.stdout[-4000:] + collect.stderr[-2000:]
    assert uses_answers, "no test module uses the answers: this test checks nothing"
    done = subprocess.run([sys.executable, "-m", "pytest", *(f"tests/{n}" for n in uses_answers), "-q", "-rs",
                           "-p", "no:cacheprovider"], cwd=built.dest, env=ENV, capture_output=True, text=True,
                          timeout=1200)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    # 5: pytest's "no tests collected", when every one of these modules skips as a whole
    assert done.returncode in (0, 5) and "failed" not in last and "error" not in last, (
        done.stdout[-4000:] + done.stderr[-2000:])
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all(HANDOUT_MARKER in line for line in skipped), done.stdout[-3000:]


def test_a_student_runs_the_judge_in_the_handout(built, tmp_path):
    report = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "judge.py", "-q", "--json", str(report)], cwd=built.dest, env=ENV,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]  # 0 only when everything passed
    assert "Traceback" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-2000:]
    results = json.loads(report.read_text(encoding="utf-8"))
    statuses = {r["name"]: r["status"] for r in results["exercises"]}
    assert len(statuses) >= 40 and set(statuses.values()) == {"not attempted"}, statuses


def test_the_classroom_workflow_answers_in_the_teachers_language():
    assert b"GRADING_LANG" not in handout.classroom_workflow()
    zh = yaml.safe_load(handout.classroom_workflow("zh"))
    judge = next(s for s in zh["jobs"]["run-autograding-tests"]["steps"] if s.get("id") == "judge")
    assert judge["env"]["GRADING_LANG"] == "zh"


def test_a_mine_copy_of_a_notebook_breaks_no_test_of_the_handout(built):
    """The README tells students to keep notes in notebooks/NN_name-mine.ipynb: the tests that list notebooks (and
    the hand-out's README tests, which read the students' part) pass with one present."""
    mine = [built.dest / "notebooks" / "01a_embedding_lookup-mine.ipynb",
            built.dest / "notebooks" / "zh" / "01a_embedding_lookup-mine.ipynb"]
    for copy in mine:
        shutil.copyfile(copy.with_name("01a_embedding_lookup.ipynb"), copy)
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_readme_zh.py",
                               "tests/test_notebook_structure.py", "tests/test_translations.py", "-q",
                               "-p", "no:cacheprovider"], cwd=built.dest, env=ENV, capture_output=True, text=True,
                              timeout=600)
    finally:
        for copy in mine:
            copy.unlink()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_hide_quiz_answers_blanks_every_answer_and_the_judge_then_tells_nothing():
    from grading.catalog import load_chapters
    from grading.model import CheckFailed, Question, quiz_exercise

    files = {p.relative_to(REPO).as_posix(): p.read_bytes() for p in (REPO / "grading" / "checks").rglob("*.py")}
    before = dict(files)
    assert handout.hide_quiz_answers(files) == sum(len(c.quiz) for c in load_chapters())
    changed = [rel for rel in files if files[rel] != before[rel]]
    assert changed and all(handout.QUIZ_HASH.search(files[rel]) is None for rel in changed)
    quiz = quiz_exercise("01", [Question(1, "q", {"a": "x", "b": "y"}, "", "review")])
    said = set()
    for answer in ("a", "b"):  # right or wrong, the same words
        with pytest.raises(CheckFailed) as failed:
            quiz.cases[0].check({1: answer}, ())
        said.add(str(failed.value).replace(repr(answer), ""))
    assert len(said) == 1 and "Your teacher grades the quiz" in said.pop()
