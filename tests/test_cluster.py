"""Issue 34: a class graded on a real Dask cluster (distributed.LocalCluster, two worker processes on 127.0.0.1)
gives the same results as the local scheduler, and a worker killed mid-run loses no student and grades none twice.
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the cluster extra: pip install -e .[cluster]")

from grading.engine import cluster, scheduler  # noqa: E402

from answers import needs_answers  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CHAPTER = "ch01_embeddings"
SLOW = "import time\ntime.sleep(12)  # a slow import: still running when its Dask worker is killed\n"


def _class(root: Path) -> list[Path]:
    """Three students: the solution, the stub, and the solution behind a slow import."""
    folders = []
    for name, text in (("ada", (REPO / "solutions" / f"{CHAPTER}.py").read_text(encoding="utf-8")),
                       ("bob", (REPO / "exercises" / f"{CHAPTER}.py").read_text(encoding="utf-8")),
                       ("cy", SLOW + (REPO / "solutions" / f"{CHAPTER}.py").read_text(encoding="utf-8"))):
        folder = root / name / "exercises"
        folder.mkdir(parents=True)
        (folder / f"{CHAPTER}.py").write_text(text, encoding="utf-8")
        folders.append(folder)
    return folders


def _gradebook(graded) -> list[list[tuple]]:
    return [[(r.chapter, r.name, r.status, tuple((c.name, c.passed) for c in r.cases)) for r in results] for results in graded]


@needs_answers  # its students hand in the reference answer
def test_a_class_on_a_local_cluster_matches_the_local_run_and_survives_a_killed_worker(tmp_path):
    sources = _class(tmp_path)
    local = _gradebook(scheduler.grade_many(sources, "01", workers=2))
    assert [all(s == "passed" for _c, _n, s, _k in rows) for rows in local] == [True, False, True]

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as lc, distributed.Client(lc) as client:
        pids = client.run(os.getpid)  # worker address -> its process
        done: list[int] = []
        killed: list[str] = []

        def kill_the_slow_students_worker() -> None:
            """SIGKILL the Dask worker grading `cy` (the third student) while it runs: mid-task, for certain."""
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and not killed:
                for address, keys in client.processing().items():
                    if any(str(k).endswith("-2") for k in keys):
                        time.sleep(4)  # inside cy's 12 s import
                        os.kill(pids[address], signal.SIGKILL)
                        killed.append(address)
                        return
                time.sleep(0.2)

        import threading

        killer = threading.Thread(target=kill_the_slow_students_worker, daemon=True)
        killer.start()
        graded = cluster.grade_on_cluster(client, sources, "01", on_done=lambda i, _s, _r: done.append(i))
        killer.join(timeout=5)
    assert killed, "no worker was killed while it graded the slow student"
    assert sorted(done) == [0, 1, 2], done  # every student reported once: none lost, none twice
    assert _gradebook(graded) == local
    assert all(r.isolation for results in graded for r in results)
