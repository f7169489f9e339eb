"""A class graded on a Dask cluster (`distributed`): one task per student, each run by the judge's own scheduler and
sandboxed worker on whichever Dask worker takes it; the results come back into the same reports as a local run.

    from distributed import Client
    from grading.engine.cluster import grade_on_cluster
    results = grade_on_cluster(Client("tcp://scheduler:8786"), [Path("class/ada/exercises"), ...], "04")

`python judge.py --class DIR --scheduler ADDRESS` does the same. Every Dask worker needs this course installed
(the same version: checked before anything is graded) and, on Linux, bubblewrap with unprivileged user namespaces
for the OS sandbox (each result's `isolation` says which isolation it got). The student's files travel with the
task as bytes, so the workers need no shared file system. A Dask worker that dies mid-task (killed, out of memory,
its machine gone) has its students graded again on another worker by Dask's scheduler; each student's results are
taken once, as their task finishes, and released at once so a later loss cannot grade anyone twice.
"""
from __future__ import annotations

import functools
import hashlib
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Callable

from .. import i18n
from ..i18n import _, verbatim
from ..model import ExerciseResult
from ..submissions import folder_digest

GRADING = Path(__file__).resolve().parents[1]


class ClusterError(RuntimeError):
    """The cluster cannot grade this class (no worker, or workers with another version of the course)."""


def connect(address: str, timeout_s: float = 30.0):
    """A distributed.Client on the scheduler at `address`; ClusterError (worded for the teacher) when it cannot."""
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(_("Grading on a cluster needs the cluster extra (distributed): pip install -c "
                             "constraints.txt -e \".[cluster]\"")) from None
    try:
        return Client(address, timeout=timeout_s)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(_("Cannot reach the Dask scheduler at {address} ({error}): is it running, and is the "
                             "address tcp://HOST:PORT?", address=verbatim(address), error=verbatim(exc))) from None


@functools.lru_cache(maxsize=1)
def course_fingerprint() -> str:
    """A hash of the judge's checks and worker code: a Dask worker with another version would grade differently."""
    digest = hashlib.sha256()
    for path in sorted([*(GRADING / "checks").rglob("*.py"), *(GRADING / "worker").rglob("*.py")]):
        digest.update(path.relative_to(GRADING).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


_slots_lock = threading.Lock()
_slots_busy: set[int] = set()
_checker = None  # this Dask worker process's Checker: each exercise's inputs built once for every student


def _take_slot() -> int:
    """The lowest warm-worker number no other task of this Dask worker process holds (one per Dask thread)."""
    with _slots_lock:
        k = next(i for i in range(len(_slots_busy) + 1) if i not in _slots_busy)
        _slots_busy.add(k)
        return k


def grade_student(files: dict[str, bytes], target: str | None, memory_mb: int, time_limit_s: float | None,
                  fingerprint: str) -> list[ExerciseResult]:
    """On a Dask worker: one student's chapter files graded by this machine's judge (its warm sandboxed worker,
    the backend this machine has); results keep their message marks, rendered by the caller."""
    import torch

    from . import scheduler, worker_pool

    if fingerprint != course_fingerprint():
        raise ClusterError(_("A Dask worker has another version of the course's judge ({theirs}; this machine has "
                             "{ours}): install the same commit of the course on every worker.",
                             theirs=course_fingerprint(), ours=fingerprint))
    root = Path(tempfile.mkdtemp(prefix="judge-cluster-"))
    folder = root / "student" / "exercises"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / Path(name).name).write_bytes(data)
    plan = scheduler.plan_for(target)
    if scheduler.plan_needs_model(plan):
        from lesson_utils.course_model import ensure_course_model

        ensure_course_model()
    checker = _shared_checker()
    torch.set_num_threads(1)  # as grade_many does, so inputs built from model outputs match bit for bit
    k = _take_slot()
    try:
        worker = worker_pool.warm_worker(k)  # started once per Dask worker thread, warm for its next students
        results, owner = [], folder_digest(folder)  # one spare for this student's chapters (spawn), as scheduler
        for chapter, exercises in plan:
            got = scheduler.run_file(worker, chapter, exercises, folder / f"{chapter.module}.py", checker,
                                     memory_mb=memory_mb, time_limit_s=time_limit_s, blocked_extra=[root],
                                     owner=owner)
            results += got if isinstance(got, list) else scheduler.check_reply(got, checker)
        return results
    finally:
        with _slots_lock:
            _slots_busy.discard(k)
        shutil.rmtree(root, ignore_errors=True)


def _shared_checker():
    global _checker
    with _slots_lock:
        if _checker is None:
            from .checker import Checker

            _checker = Checker()
        return _checker


def _student_files(source: Path, target: str | None) -> dict[str, bytes]:
    """The student's files the target grades (read here: the Dask workers need not see this machine's disk)."""
    from .scheduler import plan_for

    wanted = [f"{chapter.module}.py" for chapter, _ in plan_for(target)]
    return {name: (source / name).read_bytes() for name in wanted if (source / name).is_file()}


def grade_on_cluster(client, sources: list[Path], target: str | None = None, memory_mb: int = 6144,
                     time_limit_s: float | None = None,
                     on_done: Callable[[int, Path, list[ExerciseResult]], None] | None = None,
                     lang: str | None = None) -> list[list[ExerciseResult]]:
    """Grade several exercise folders on the Dask cluster `client` (a distributed.Client); results in `sources`
    order, as scheduler.grade_many gives them. on_done(i, source, results) is called once per student, as each
    finishes (in this thread). lang as in grade_many."""
    from distributed import as_completed

    if not client.scheduler_info().get("workers"):
        client.wait_for_workers(1, timeout=120)
    sources = [Path(s).resolve() for s in sources]
    fingerprint = course_fingerprint()
    run = uuid.uuid4().hex[:8]
    futures = {client.submit(grade_student, _student_files(src, target), target, memory_mb, time_limit_s,
                             fingerprint, key=f"grade-{run}-{i}", pure=False, retries=0): i
               for i, src in enumerate(sources)}
    shown = i18n.language(lang) if lang != i18n.MARKED else ""
    found: dict[int, list[ExerciseResult]] = {}
    for future in as_completed(futures):
        i = futures[future]
        # a ClusterError raises here, as does a student whose task took down distributed.scheduler.allowed-failures
        # workers (3 by default): each death before that re-grades the student on another worker
        results = future.result()
        future.release()  # nothing of it stays on the cluster to be recomputed if a worker dies later
        if lang != i18n.MARKED:
            results = [i18n.localize(r, shown) for r in results]
        found[i] = results
        if on_done:
            on_done(i, sources[i], results)
    return [found[i] for i in range(len(sources))]
