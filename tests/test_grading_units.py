"""Unit tests for the judge's per-process singletons (each has one explicit reset that tests use instead of
reaching into a cache: grading/engine/sandbox.py: reset_detection, grading/engine/worker_pool.py: close_workers,
grading/notebook.py: reset_session), the catalog's errors, and how the engine completes a result record."""
from __future__ import annotations

from grading.engine import sandbox
from grading.engine import worker_pool as workers
from grading.engine.checker import Checker


def test_reset_detection_makes_detect_look_again(monkeypatch):
    monkeypatch.setenv("GRADING_SANDBOX", "none")
    sandbox.reset_detection()
    try:
        assert sandbox.detect().name == sandbox.AUDIT
    finally:
        monkeypatch.delenv("GRADING_SANDBOX")
        sandbox.reset_detection()


def test_close_workers_closes_every_warm_worker_and_the_next_call_starts_afresh(monkeypatch):
    started = []

    class FakeWorker:
        def __init__(self, isolation, backend=None):
            self.closed = False
            started.append(self)

        def start(self):
            return self

        @property
        def alive(self):
            return not self.closed

        def close(self):
            self.closed = True

    monkeypatch.setattr(workers, "Worker", FakeWorker)
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Isolation(sandbox.AUDIT, "test"))
    workers.close_workers()
    first = workers.warm_worker(0)
    assert workers.warm_worker(0) is first and workers.warm_worker(1) is not first
    workers.close_workers()
    assert all(w.closed for w in started)
    assert workers.warm_worker(0) is not first and len(started) == 3
    workers.close_workers()


def test_reset_session_forgets_the_notebooks_checker():
    from grading import notebook

    notebook._checker = Checker()
    notebook.reset_session()
    assert notebook._checker is None


def test_the_catalog_raises_and_judge_turns_it_into_the_message_and_exit_code_1(monkeypatch, capsys):
    """Library code raises CatalogError (never exits the process); judge.py shows its text on stderr, exit code 1,
    before it probes the sandbox."""
    import pytest

    import judge
    from grading import catalog

    with pytest.raises(catalog.CatalogError, match="No chapter or exercise called 'nope'"):
        catalog.select(catalog.load_chapters(), "nope")
    probed = []
    monkeypatch.setattr(sandbox, "detect", lambda *a, **k: probed.append(1))
    assert judge.run(["nope"]) == 1 and not probed
    assert "No chapter or exercise called 'nope'" in capsys.readouterr().err


def test_an_unknown_name_is_refused_in_the_judges_language(monkeypatch, capsys):
    """`judge.py --lang zh nope` says so in Chinese; check() in the language of the notebook's edition."""
    import pytest

    import judge
    from grading import catalog, notebook

    monkeypatch.setenv("GRADING_LANG", "en")  # restored afterwards, whatever --lang sets
    assert judge.run(["--lang", "zh", "nope"]) == 1
    err = capsys.readouterr().err
    assert "没有名为 'nope' 的章节或练习" in err and "top_p_filter" in err and "No chapter" not in err, err
    with pytest.raises(catalog.CatalogError, match="没有名为 'nope' 的章节或练习"):
        notebook.check("nope", lang="zh")

    def broken(name):
        raise RuntimeError("a typo in the checks")

    monkeypatch.setattr(catalog.importlib, "import_module", broken)
    with pytest.raises(catalog.CatalogError, match="fail to load .RuntimeError: a typo in the checks.*bug in the "
                                                    "course"):
        catalog.load_chapters()


def test_a_case_must_name_a_protocol_when_its_chapter_loads(monkeypatch):
    import types

    import pytest

    from grading import catalog
    from grading.model import Case, Chapter, Exercise

    chapter = Chapter("09", "ch09_demo", "demo", [Exercise("f", "", [Case("a", tuple, lambda *a: None, call="no")],
                                                           "")])
    monkeypatch.setattr(catalog.importlib, "import_module", lambda name: types.SimpleNamespace(CHAPTER=chapter))
    with pytest.raises(catalog.CatalogError, match="call= must name a protocol in grading/worker/calls/"):
        catalog.load_chapters()


def test_the_engine_completes_each_record_once():
    """Points and maximum, summary, hint and the learner's failing functions a result calls: filled by
    engine/checker.py's complete, so that no report looks them up again."""
    from grading.engine.checker import complete, whole_exercise
    from grading.model import ERROR, NOT_ATTEMPTED, PASSED, WRONG, Case, Chapter, CaseResult, Exercise, ExerciseResult

    noop = lambda *a: None  # noqa: E731
    exercises = [Exercise("softmax", "s", [Case("a", tuple, noop)], "hint s", points=3.0),
                 Exercise("top_p", "t", [Case("a", tuple, noop, points=1.0), Case("b", tuple, noop, points=3.0)],
                          "hint t", points=8.0, partial_credit=True),
                 Exercise("greedy", "g", [Case("a", tuple, noop)], "hint g")]
    chapter = Chapter("04", "ch04_sampling", "t", list(exercises))
    results = [ExerciseResult("04", "softmax", WRONG, [CaseResult("a", False)]),
               ExerciseResult("04", "top_p", WRONG, [CaseResult("a", False), CaseResult("b", True)]),
               whole_exercise(chapter, exercises[2], NOT_ATTEMPTED, "not yet")]
    softmax, top_p, greedy = complete(exercises, results, {"top_p": ["softmax", "greedy"], "softmax": []})
    assert (softmax.points, softmax.max_points, top_p.points, top_p.max_points) == (0.0, 3.0, 6.0, 8.0)
    assert (top_p.summary, top_p.hint) == ("t", "hint t")
    assert top_p.fails_through == [("softmax", WRONG), ("greedy", NOT_ATTEMPTED)] and softmax.fails_through == []
    passed = complete(exercises, [ExerciseResult("04", "top_p", PASSED, [CaseResult("a", True)])], {"top_p": ["x"]})
    assert passed[0].points == 8.0 and passed[0].fails_through == []
    assert whole_exercise(chapter, exercises[0], ERROR, "m", import_error="SyntaxError").import_error == "SyntaxError"
    from grading.engine.checker import class_name  # an error's class comes from the learner's process: checked

    assert class_name("ValueError") == "ValueError" and class_name("\ue000forged") == class_name("a b") == ""


def test_judge_prove_is_the_proof_and_check_its_older_name(monkeypatch):
    import judge

    ran = []
    monkeypatch.setattr(judge, "cmd_check", lambda args: ran.append(args.target) or 7)
    assert judge.main(["prove", "04"]) == 7 and judge.main(["check"]) == 7 and ran == ["04", None]
