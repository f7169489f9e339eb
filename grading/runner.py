"""The judge's side of grading: builds each case's inputs, has a warm sandboxed worker run the learner's
code on them (grading/pool.py, grading/warm.py), and checks what comes back against its own references.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pkgutil
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from . import pool, warm
from .compare import CheckFailed
from .spec import Chapter, Exercise

REPO = Path(__file__).resolve().parent.parent
IMPORT_TIMEOUT_S = warm.IMPORT_TIMEOUT_S  # importing the learner's file, before any exercise starts
SETUP_TIMEOUT_S = warm.SETUP_TIMEOUT_S  # copying one exercise's inputs, outside its own time limit
DEPENDENT_TIMEOUT_S = warm.DEPENDENT_TIMEOUT_S  # an exercise calling the learner's own function that timed out

PASSED, WRONG, ERROR, TIMEOUT, NOT_ATTEMPTED = "passed", "wrong answer", "error", "timeout", "not attempted"


@dataclass
class CaseResult:
    name: str
    passed: bool
    seconds: float = 0.0
    message: str = ""


@dataclass
class ExerciseResult:
    chapter: str
    name: str
    status: str
    cases: list[CaseResult] = field(default_factory=list)
    message: str = ""
    isolation: str = ""  # the sandbox the learner's code ran in (grading.sandbox: "bubblewrap" or "audit hooks")

    @property
    def passed(self) -> bool:
        return self.status == PASSED


def load_chapters() -> list[Chapter]:
    """Every `grading/chNN_*.py` module's CHAPTER, in chapter order."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name[:2] == "ch" and m.name[2:4].isdigit())
    chapters = []
    for n in names:
        try:
            chapters.append(importlib.import_module(f"grading.{n}").CHAPTER)
        except Exception as exc:
            raise SystemExit(f"The course's own checks in grading/{n}.py fail to load ({type(exc).__name__}: {exc}). "
                             "This is a bug in the course, not in your exercises: update your copy of the course.")
    return chapters


def select(chapters: list[Chapter], target: str | None) -> list[tuple[Chapter, list[Exercise]]]:
    """Chapters and exercises matching a chapter number ('01'), an exercise name, or everything."""
    if not target:
        return [(c, list(c.exercises)) for c in chapters]
    t = target.lower().removeprefix("ch")
    picked = [(c, list(c.exercises)) for c in chapters if c.number == t.zfill(2) or c.module == target]
    if picked:
        return picked
    picked = [(c, [e for e in c.exercises if e.name == target]) for c in chapters]
    picked = [(c, es) for c, es in picked if es]
    if not picked:
        known = ", ".join(e.name for c in chapters for e in c.exercises)
        raise SystemExit(f"No chapter or exercise called {target!r}. Exercises: {known}")
    return picked


class Checker:
    """Runs the judge-side checks; case inputs are built once and reused across students.

    Checks run one at a time under a lock, inside `torch.random.fork_rng`, so that chapters graded
    in parallel threads never interleave their use of torch's global random generator.
    """

    def __init__(self):
        self._inputs: dict[tuple[str, str, int], tuple] = {}
        self._blobs: dict[str, bytes] = {}
        self._verdicts: dict[tuple, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def inputs(self, chapter: Chapter, ex: Exercise, i: int) -> tuple:
        key = (chapter.module, ex.name, i)
        if key not in self._inputs:
            self._inputs[key] = ex.cases[i].make_inputs()
        return self._inputs[key]

    def prepare(self, chapter: Chapter, exercises: list[Exercise]) -> None:
        """Build the reference inputs now (while the learner's process runs), so checking is quick later."""
        for ex in exercises:
            for i in range(len(ex.cases)):
                with self._lock, torch.random.fork_rng():
                    self.inputs(chapter, ex, i)

    def blob(self, chapter: Chapter, ex: Exercise) -> tuple[str, bytes]:
        """(key, pickled inputs of every case) for a worker; built once per Checker."""
        key = f"{chapter.module}:{ex.name}"
        if key not in self._blobs:
            self.prepare(chapter, [ex])
            with self._lock:
                self._blobs[key] = pool.pickle_inputs({ex.name: [self.inputs(chapter, ex, i)
                                                                 for i in range(len(ex.cases))]})
        return key, self._blobs[key]

    def grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        with self._lock, torch.random.fork_rng():
            return self._grade(chapter, ex, raw)

    def _verdict(self, chapter: Chapter, ex: Exercise, i: int, output: object) -> tuple[str, str]:
        """(kind, message) of case i's check on `output`; remembered per output digest, so a class of equal
        answers runs each check once (checks are deterministic: fixed inputs, forked RNG)."""
        try:
            key = (chapter.module, ex.name, i, output_digest(output))
        except Exception:  # an output the digest cannot read (an odd tensor): check it, remember nothing
            key = None
        if key in self._verdicts:
            return self._verdicts[key]
        try:
            ex.cases[i].check(output, self.inputs(chapter, ex, i))
            verdict = ("pass", "")
        except NotImplementedError:
            verdict = ("not answered", "not answered yet")
        except CheckFailed as exc:
            verdict = ("fail", str(exc))
        except Exception as exc:  # an odd result type, or a bug in the check itself
            verdict = ("error", f"the check could not process your result "
                                f"({type(exc).__name__}: {exc}). If your result has the documented type and "
                                "shape, this may be a bug in the course's checks: please report it.")
        if key is not None:
            self._verdicts[key] = verdict
        return verdict

    def _grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        expected_names = [c.name for c in ex.cases]
        if (not isinstance(raw, list) or [e.get("name") if isinstance(e, dict) else None for e in raw] != expected_names
                or not expected_names):
            return _whole_exercise(chapter, ex, ERROR, "The grading process sent back results that do not match this "
                                                       "exercise's cases; they were not trusted.")
        cases, not_impl = [], 0
        for i, entry in enumerate(raw):
            case = ex.cases[i]
            res = CaseResult(case.name, False, float(entry.get("seconds", 0.0)))
            if entry.get("not_implemented"):
                not_impl += 1
                res.message = "not implemented yet (raises NotImplementedError)"
            elif "error" in entry:
                res.message = "your code raised an error:\n" + entry["error"]
                if entry.get("error_type") in ("MemoryError", "OutOfMemoryError") or "can't allocate memory" in entry["error"]:
                    res.message += "\n(The grading process has a memory limit; does your code build something huge?)"
            else:
                verdict = self._verdict(chapter, ex, i, entry.get("output"))
                res.passed = verdict[0] == "pass"
                res.message = verdict[1]
                not_impl += verdict[0] == "not answered"
            cases.append(res)
        if all(c.passed for c in cases):
            status = PASSED
        elif not_impl == len(cases):
            status = NOT_ATTEMPTED
        elif any(c.message.startswith(("your code raised", "the check could not")) for c in cases):
            status = ERROR
        else:
            status = WRONG
        return ExerciseResult(chapter.number, ex.name, status, cases)


def output_digest(value: object) -> str:
    """A digest of a learner output that two outputs share only if every check must treat them alike:
    types, dtypes, shapes, strides, values, and which tensors share a storage (tied weights)."""
    h = hashlib.sha256()
    storages: dict[int, int] = {}

    def walk(v: object) -> None:
        h.update(type(v).__qualname__.encode() + b"\0")
        if isinstance(v, torch.Tensor):
            ptr = v.untyped_storage().data_ptr()
            sid = storages.setdefault(ptr, len(storages))
            h.update(repr((str(v.dtype), tuple(v.shape), v.stride(), v.storage_offset(), sid, v.requires_grad,
                           v.untyped_storage().nbytes())).encode())
            if v.numel() and not v.is_meta:
                flat = torch.empty(v.numel(), dtype=v.dtype)  # stride 1, so it can be viewed as bytes
                flat.copy_(v.detach().reshape(-1))
                h.update(flat.view(torch.uint8).numpy().tobytes())
        elif isinstance(v, (list, tuple)):
            h.update(str(len(v)).encode())
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            h.update(str(len(v)).encode())
            for k, x in v.items():
                walk(k)
                walk(x)
        else:
            h.update(repr(v).encode() + b"\0")

    walk(value)
    return h.hexdigest()


def _whole_exercise(chapter: Chapter, ex: Exercise, status: str, message: str) -> ExerciseResult:
    return ExerciseResult(chapter.number, ex.name, status, [CaseResult(c.name, False, 0.0, message) for c in ex.cases], message)


def _blocked(source: Path, extra: list[Path]) -> list[str]:
    """What learner code must never read (the OS sandbox hides it; the audit-hook fallback refuses it)."""
    paths = [REPO / "solutions", source.parent / "solutions", REPO / ".git", REPO / "grading", REPO / "tests",
             REPO / "mutants", source, Path.home() / ".ssh", *extra]
    return sorted({str(p.resolve()) for p in paths})


def _request(chapter: Chapter, exercises: list[Exercise], keys: dict[str, str], memory_mb: int,
             time_limit_s: float | None, blocked: list[str], source: bytes = b"") -> dict:
    from .calls import calls_in_source

    return {
        "calls": calls_in_source(source.decode("utf-8", "replace"), [e.name for e in exercises]),
        "module": chapter.module, "filename": f"{chapter.module}.py", "memory_mb": memory_mb, "blocked": blocked,
        "import_timeout_s": IMPORT_TIMEOUT_S, "setup_timeout_s": SETUP_TIMEOUT_S,
        "dependent_timeout_s": DEPENDENT_TIMEOUT_S,
        "timeouts": {e.name: float(time_limit_s or e.timeout_s) for e in exercises},
        "exercises": [{"name": e.name, "is_quiz": e.is_quiz, "key": keys[e.name], "cases": [c.name for c in e.cases],
                       "calls": [c.call for c in e.cases]} for e in exercises],
    }


OUTCOME_STATUS = {"timeout": TIMEOUT, "import_error": ERROR, "died": ERROR, "output_limit": ERROR,
                  "too_big": ERROR, "protocol": ERROR}


@dataclass
class _Reply:
    """What a worker sent back for one chapter of one learner file, still to be checked by the judge."""
    chapter: Chapter
    exercises: list[Exercise]
    reply: dict
    blobs: list[bytes]
    isolation: str


def run_file(worker: pool.Worker, chapter: Chapter, exercises: list[Exercise], learner_file: Path,
             checker: Checker, memory_mb: int = 6144, time_limit_s: float | None = None,
             blocked_extra: list[Path] = ()) -> "list[ExerciseResult] | _Reply":
    """Run the learner's code for `exercises` on `worker`: the worker's reply to check (check_reply), or the
    final results when there is nothing to check (no file, unreadable, the worker failed)."""
    if not learner_file.exists():
        return [_whole_exercise(chapter, e, NOT_ATTEMPTED, f"{learner_file} does not exist.") for e in exercises]
    try:
        source = learner_file.read_bytes()  # the judge reads a copy; the student's folder is never written
    except OSError as exc:
        return [_whole_exercise(chapter, e, ERROR, f"Cannot read {learner_file}: {exc}") for e in exercises]
    iso = worker.isolation.name
    try:
        keys = {}
        with worker.lock:
            for e in exercises:
                key, blob = checker.blob(chapter, e)
                worker.send_inputs(key, blob)
                keys[e.name] = key
            req = _request(chapter, exercises, keys, memory_mb, time_limit_s,
                           _blocked(learner_file.parent, list(blocked_extra)), source)
            wait = IMPORT_TIMEOUT_S + sum(req["timeouts"].values()) + SETUP_TIMEOUT_S * (len(exercises) + 1)
            reply, blobs = worker.grade(req, source, 2 * wait + 60)
    except pool.WorkerFailed as exc:
        return [_tag(_whole_exercise(chapter, e, ERROR, f"The grading worker failed, so this was not graded: {exc}"),
                     iso) for e in exercises]
    return _Reply(chapter, exercises, reply, blobs, iso)


def check_reply(got: "_Reply", checker: Checker) -> list[ExerciseResult]:
    """The judge's verdict on a worker's reply: each result loaded as plain data and checked."""
    results, it = [], iter(got.blobs)
    for e in got.exercises:
        outcome = got.reply["outcomes"].get(e.name, {"kind": "died", "message": "no outcome was reported"})
        if outcome["kind"] == "result":
            try:
                raw = torch.load(io.BytesIO(next(it)), weights_only=True)
                res = checker.grade(got.chapter, e, raw)
            except Exception as exc:
                res = _whole_exercise(got.chapter, e, ERROR, f"Your result could not be read back safely "
                                                             f"({type(exc).__name__}); return plain tensors, numbers "
                                                             "or tuples of them.")
        else:
            res = _whole_exercise(got.chapter, e, OUTCOME_STATUS.get(outcome["kind"], ERROR), outcome["message"])
        results.append(_tag(res, got.isolation))
    return results


def grade_file(worker: pool.Worker, chapter: Chapter, exercises: list[Exercise], learner_file: Path,
               checker: Checker, memory_mb: int = 6144, time_limit_s: float | None = None,
               blocked_extra: list[Path] = ()) -> list[ExerciseResult]:
    """Grade `exercises` of one chapter in a copy of `learner_file`, on `worker`; never raises for learner code."""
    got = run_file(worker, chapter, exercises, learner_file, checker, memory_mb, time_limit_s, blocked_extra)
    return got if isinstance(got, list) else check_reply(got, checker)


def _tag(res: ExerciseResult, isolation: str) -> ExerciseResult:
    res.isolation = isolation
    return res


def _plan_needs_model(plan) -> bool:
    return any(e.uses_course_model for _, es in plan for e in es)


def _workers_for(n_tasks: int, workers: int | None) -> int:
    return max(1, min(n_tasks, workers or min(2, os.cpu_count() or 1)))


def grade_many(sources: list[Path], target: str | None = None, memory_mb: int = 6144, workers: int | None = None,
               checker: Checker | None = None, time_limit_s: float | None = None,
               on_done: Callable[[int, Path, list[ExerciseResult]], None] | None = None,
               blocked_extra: list[Path] = (), on_result: Callable[[ExerciseResult], None] | None = None,
               ) -> list[list[ExerciseResult]]:
    """Grade several exercise folders (a class) on a pool of warm workers; results in `sources` order.

    on_done(i, source, results) is called (from the checking thread) as each folder is finished;
    on_result(result) as each exercise is (one chapter's results together, never interleaved).
    Workers run the learner's code while one thread checks what they sent back, so no worker waits for a check.
    """
    checker = checker or Checker()
    plan = select(load_chapters(), target)
    if _plan_needs_model(plan):
        from lesson_utils.course_model import ensure_course_model

        ensure_course_model()  # build the cache once here, not concurrently in the workers
    sources = [Path(s).resolve() for s in sources]
    tasks: queue.Queue = queue.Queue()
    for i, src in enumerate(sources):
        for j, (chapter, exercises) in enumerate(plan):
            tasks.put((i, j, src, chapter, exercises))
    found: dict[tuple[int, int], list[ExerciseResult]] = {}
    remaining = [len(plan)] * len(sources)
    n = _workers_for(tasks.qsize(), workers)
    to_check: queue.Queue = queue.Queue(maxsize=2 * n)  # (i, j, src, reply) for the checking thread; None ends it
    check_failed: list[BaseException] = []  # the first error of the checking thread (a callback that raised)

    def finish(i: int, j: int, src: Path, res: list[ExerciseResult]) -> None:
        for r in res if on_result else ():
            on_result(r)
        found[(i, j)] = res
        remaining[i] -= 1
        if remaining[i] == 0 and on_done:  # in one thread: one student's report is never interleaved
            on_done(i, src, [r for jj in range(len(plan)) for r in found[(i, jj)]])

    def run_worker(k: int) -> None:
        while True:
            try:
                i, j, src, chapter, exercises = tasks.get_nowait()
            except queue.Empty:
                break
            try:
                worker = pool.worker(k)
            except pool.WorkerFailed as exc:
                got = [_whole_exercise(chapter, e, ERROR, f"The grading worker could not start: {exc}")
                       for e in exercises]
            else:
                got = run_file(worker, chapter, exercises, src / f"{chapter.module}.py", checker, memory_mb,
                               time_limit_s, blocked_extra)
            to_check.put((i, j, src, got))  # checked in the checking thread while this worker runs the next

    def run_checks() -> None:
        while (item := to_check.get()) is not None:  # drains to the end whatever fails, so no worker blocks
            i, j, src, got = item
            try:
                res = got if isinstance(got, list) else check_reply(got, checker)
            except Exception as exc:  # a bug in the judge: a named error for this chapter, never a lost student
                res = [_whole_exercise(plan[j][0], e, ERROR, f"The judge failed while checking this "
                                                             f"({type(exc).__name__}: {exc}); please report it.")
                       for e in plan[j][1]]
            try:
                finish(i, j, src, res)
            except BaseException as exc:  # on_result/on_done raised: re-raised in the caller's thread below
                found[(i, j)] = res
                check_failed.append(exc)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the learner's process, so inputs built from model outputs match bit for bit
    checking = threading.Thread(target=run_checks, name="grading-checks", daemon=True)
    checking.start()
    try:
        with ThreadPoolExecutor(max_workers=n) as ex:
            list(ex.map(run_worker, range(n)))
    finally:
        to_check.put(None)
        checking.join()
        torch.set_num_threads(threads)
    if check_failed:
        raise check_failed[0]
    return [[r for j in range(len(plan)) for r in found[(i, j)]] for i in range(len(sources))]


def grade(source: Path, target: str | None = None, memory_mb: int = 6144, workers: int | None = None,
          checker: Checker | None = None, time_limit_s: float | None = None,
          on_result=None) -> list[ExerciseResult]:
    """Grade the exercise files in `source` (an exercises/ or solutions/ folder).

    memory_mb limits the learner process's address space (POSIX only); time_limit_s, when given,
    replaces every exercise's own time limit. on_result, when given, is called with each
    ExerciseResult as soon as its chapter is graded (from a worker thread), for live output.
    """
    return grade_many([Path(source)], target, memory_mb, workers, checker, time_limit_s, on_result=on_result)[0]
