"""Unit tests for the judge's per-process singletons: each has one explicit reset that tests use instead of
reaching into a cache (grading/engine/sandbox.py: reset_detection, grading/engine/worker_pool.py: close_workers,
grading/notebook.py: reset_session)."""
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
