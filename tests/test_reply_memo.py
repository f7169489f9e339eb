"""A class's equal answers are loaded and checked once (grading/engine/checker.py: Checker.reply), and each case's
seconds travel apart from the result (the TIMES frame), so that equal answers are equal bytes."""
from __future__ import annotations

from pathlib import Path

from answers import solution_source
from grading import model
from grading.engine import scheduler
from grading.engine.checker import Checker, timed
from grading.model import CaseResult, ExerciseResult

CHAPTER = type("Chapter", (), {"module": "ch01_embeddings"})()
EXERCISE = type("Exercise", (), {"name": "lookup"})()


def verdict() -> ExerciseResult:
    return ExerciseResult("01", "lookup", model.PASSED, [CaseResult("a", True, 0.0), CaseResult("b", True, 0.0)])


def test_equal_bytes_are_judged_once_and_each_student_gets_a_copy():
    checker, calls = Checker(), []

    def judge():
        calls.append(1)
        return verdict()

    first = checker.reply(CHAPTER, EXERCISE, b"bytes", None, frozenset(), judge)
    timed(first, [0.5, 0.25])
    second = checker.reply(CHAPTER, EXERCISE, b"bytes", None, frozenset(), judge)
    assert len(calls) == 1 and second is not first
    assert [c.seconds for c in second.cases] == [0.0, 0.0]  # not the first student's timings
    for watched, facts, blob in ((["#0"], frozenset(), b"bytes"), (None, frozenset({"matmul"}), b"bytes"),
                                 (None, frozenset(), b"other")):
        checker.reply(CHAPTER, EXERCISE, blob, watched, facts, judge)
    assert len(calls) == 4  # what was watched, what the source uses and the bytes are each part of the key


def test_a_verdict_cut_short_by_the_time_limit_is_not_kept():
    checker, calls = Checker(), []

    def judge():
        calls.append(1)
        checker._timeouts += 1  # as Checker.grade counts a CheckTimeout
        return verdict()

    checker.reply(CHAPTER, EXERCISE, b"bytes", None, frozenset(), judge)
    checker.reply(CHAPTER, EXERCISE, b"bytes", None, frozenset(), judge)
    assert len(calls) == 2


def test_timings_that_are_not_one_number_per_case_are_left_out():
    assert [c.seconds for c in timed(verdict(), [1.0]).cases] == [0.0, 0.0]
    assert [c.seconds for c in timed(verdict(), "fast").cases] == [0.0, 0.0]
    assert [c.seconds for c in timed(verdict(), ["1", None]).cases] == [0.0, 0.0]  # a worker's odd list: no crash
    assert [c.seconds for c in timed(verdict(), [1.0, float("nan")]).cases] == [0.0, 0.0]
    assert [c.seconds for c in timed(verdict(), [1, 2.5]).cases] == [1.0, 2.5]


def test_two_students_with_the_same_file_each_get_their_own_timings(tmp_path: Path):
    folders = []
    for name in ("ada", "bo"):
        ex = tmp_path / name / "exercises"
        ex.mkdir(parents=True)
        (ex / "ch01_embeddings.py").write_text(solution_source("ch01_embeddings"), encoding="utf-8")
        folders.append(ex)
    checker = Checker()
    ada, bo = scheduler.grade_many(folders, "embedding_backward", workers=1, checker=checker)
    assert ada[0].status == bo[0].status == model.PASSED, (ada[0], bo[0])
    assert len(checker._replies) == 1  # bo's reply was the same bytes as ada's
    assert any(c.seconds > 0 for c in ada[0].cases) and any(c.seconds > 0 for c in bo[0].cases)
    assert ada[0].cases is not bo[0].cases
