"""Schedule grading: each chapter of each learner folder goes to a warm sandboxed worker (engine/worker_pool.py),
whose reply one checking thread hands to the Checker (engine/checker.py) while the workers run the next file.
A class spread over a Dask cluster runs this same scheduler on each cluster worker (engine/cluster.py).
"""
from __future__ import annotations

import io
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from .. import i18n
from ..i18n import _, verbatim
from ..catalog import chapters_for, select
from ..submissions import folder_digest
from ..model import ERROR, NOT_ATTEMPTED, PASSED, TIMEOUT, WRONG, Chapter, Exercise, ExerciseResult
from ..worker import limits
from ..worker.calls.unchanged import UNCHANGED
from . import sandbox, worker_pool
from .worker_pool import Worker, WorkerFailed
from .checker import Checker, class_name, complete, timed, whole_exercise
from .observed import NotWatched, with_watched
from ..techniques import source_facts
from ..dependencies import call_graph

REPO = Path(__file__).resolve().parents[2]
IMPORT_TIMEOUT_S = limits.IMPORT_TIMEOUT_S  # importing the learner's file, before any exercise starts
SETUP_TIMEOUT_S = limits.SETUP_TIMEOUT_S  # copying one exercise's inputs, outside its own time limit
DEPENDENT_TIMEOUT_S = limits.DEPENDENT_TIMEOUT_S  # an exercise calling the learner's own function that timed out


def _blocked(source: Path, extra: list[Path]) -> list[str]:
    """What learner code must never read (the OS sandbox hides it; the audit-hook fallback refuses it)."""
    paths = [REPO / "solutions", source.parent / "solutions", REPO / ".git", REPO / "grading", REPO / "tests",
             REPO / "mutants", source, Path.home() / ".ssh", *extra]
    return sorted({str(p.resolve()) for p in paths})


def _request(chapter: Chapter, exercises: list[Exercise], keys: dict[str, str], memory_mb: int,
             time_limit_s: float | None, blocked: list[str], graph: dict[str, list[str]],
             owner: str | None = None) -> dict:
    return {
        "call_graph": graph, "owner": owner,
        "module": chapter.module, "filename": f"{chapter.module}.py", "memory_mb": memory_mb, "blocked": blocked,
        "import_timeout_s": IMPORT_TIMEOUT_S, "setup_timeout_s": SETUP_TIMEOUT_S,
        "dependent_timeout_s": DEPENDENT_TIMEOUT_S,
        "timeouts": {e.name: float(time_limit_s or e.timeout_s) for e in exercises},
        "exercises": [{"name": e.name, "is_quiz": e.is_quiz, "key": keys[e.name], "cases": [c.name for c in e.cases],
                       "protocols": [c.call for c in e.cases]} for e in exercises],
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
    graph: dict[str, list[str]]  # the learner file's call graph (dependencies.call_graph), read once per file
    facts: dict[str, frozenset]  # what each exercise function's source uses (techniques.py), read once per file


def run_file(worker: Worker, chapter: Chapter, exercises: list[Exercise], learner_file: Path,
             checker: Checker, memory_mb: int = 6144, time_limit_s: float | None = None,
             blocked_extra: list[Path] = (), owner: str | None = None) -> "list[ExerciseResult] | _Reply":
    """Run the learner's code for `exercises` on `worker`: the worker's reply to check (check_reply), or the
    final results when there is nothing to check (no file, unreadable, the worker failed).
    owner: the learner's (submissions.folder_digest: a spawn worker keeps their spare for their next request)."""
    if not learner_file.exists():
        return [whole_exercise(chapter, e, NOT_ATTEMPTED, _("{file} does not exist.", file=verbatim(learner_file)))
                for e in exercises]
    try:
        code = learner_file.read_bytes()  # the judge reads a copy; the student's folder is never written
    except OSError as exc:
        return [whole_exercise(chapter, e, ERROR, _("Cannot read {file}: {error}", file=verbatim(learner_file),
                                                    error=verbatim(exc))) for e in exercises]
    text = code.decode("utf-8", "replace")
    graph = call_graph(text, [e.name for e in exercises])
    facts = source_facts(text, [e.name for e in exercises if e.source_check is not None])
    iso = worker.isolation.name
    try:
        keys = {}
        with worker.lock:
            for e in exercises:
                key, blob = checker.blob(chapter, e)
                worker.send_inputs(key, blob)
                keys[e.name] = key
            req = _request(chapter, exercises, keys, memory_mb, time_limit_s,
                           _blocked(learner_file.parent, list(blocked_extra)), graph, owner)
            wait = IMPORT_TIMEOUT_S + sum(req["timeouts"].values()) + SETUP_TIMEOUT_S * (len(exercises) + 1)
            reply, blobs = worker.grade(req, code, 2 * wait + 60)
    except WorkerFailed as exc:
        return [_tag(whole_exercise(chapter, e, ERROR, _("The grading worker failed, so this was not graded: {error}",
                                                         error=_detail(exc))), iso) for e in exercises]
    return _Reply(chapter, exercises, reply, blobs, iso, graph, facts)


def check_reply(got: "_Reply", checker: Checker) -> list[ExerciseResult]:
    """The judge's verdict on a worker's reply: each result loaded as plain data and checked (Checker.reply)."""
    results, it = [], iter(got.blobs)
    for e in got.exercises:
        outcome = got.reply["outcomes"].get(e.name, {"kind": "died", "message": _("no outcome was reported")})
        if outcome["kind"] == "result":
            blob, facts, watched = next(it), got.facts.get(e.name, frozenset()), outcome.get("watched")
            try:
                res = checker.reply(got.chapter, e, blob, watched, facts, lambda: by_source(e, checker.grade(
                    got.chapter, e, with_watched(e, torch.load(io.BytesIO(blob), weights_only=True), watched)), facts))
            except NotWatched as exc:
                res = whole_exercise(got.chapter, e, ERROR, _(
                    "The judge could not watch your function's inputs from outside its process ({error}), so it "
                    "cannot tell whether your function changed them; this exercise was not graded. Grade again.",
                    error=verbatim(exc)))
            except Exception as exc:
                res = whole_exercise(got.chapter, e, ERROR, _("Your result could not be read back safely ({error}); "
                                                               "return plain tensors, numbers or tuples of them.",
                                                               error=type(exc).__name__))
        else:
            res = whole_exercise(got.chapter, e, OUTCOME_STATUS.get(outcome["kind"], ERROR),
                                 outcome_message(outcome, f"{got.chapter.module}.py"), import_error(outcome))
        results.append(_tag(timed(res, outcome.get("seconds")), got.isolation))
    return results


def by_source(ex: Exercise, res: ExerciseResult, facts: frozenset) -> ExerciseResult:
    """`res` with every passed case that the learner's source does not back failed with the exercise's message
    (Exercise.source_check, given the case's call without "+unchanged": a technique the learner's process only
    reports must be in the source too)."""
    if ex.source_check is None:
        return res
    for case, got in zip(ex.cases, res.cases):
        why = ex.source_check(facts, case.call.removesuffix(UNCHANGED)) if got.passed else ""
        if why:
            got.passed, got.message, got.mistake = False, why, ""
    if res.status == PASSED and not all(c.passed for c in res.cases):
        res.status = WRONG
    return res


def import_error(outcome: dict) -> str:
    """The class of what importing the learner's file raised (grading/worker/learner_process.py sends it on the
    first line of an import error), or ''."""
    return class_name(outcome["message"].split("\n", 1)[0]) if outcome["kind"] == "import_error" else ""


def _detail(exc: BaseException) -> str:
    """A WorkerFailed's text: marked where engine/worker_pool.py words it, else shown as is (a technical detail)."""
    text = str(exc)
    return text if i18n.START in text else verbatim(text)


def outcome_message(outcome: dict, filename: str) -> str:
    """The learner's message for a worker's outcome: the worker's own messages are marked where it makes them; an
    import error's traceback comes from the learner's process and is shown as is (never read as a message)."""
    if outcome["kind"] == "import_error":
        return _("Importing {file} failed:\n{traceback}", file=filename,
                 traceback=verbatim(outcome["message"].partition("\n")[2]))
    return str(outcome["message"])


def _tag(res: ExerciseResult, isolation: str) -> ExerciseResult:
    res.isolation = isolation
    return res


def plan_needs_model(plan) -> bool:
    """Whether an exercise of `plan` gets the course model (its cache is then prepared once, before grading)."""
    return any(e.uses_course_model for _chapter, es in plan for e in es)


def plan_for(target: str | None) -> list[tuple[Chapter, list[Exercise]]]:
    """The chapters and exercises `target` selects, with only their chapters' checks imported
    (catalog.chapters_for: one exercise from the command line does not load the whole course)."""
    return select(chapters_for(target), target)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _complete_reply(got: _Reply) -> bool:
    """Whether every exercise of the reply ran to its result (no timeout, no process that died: nothing that
    another run on a less busy machine could change)."""
    outcomes = got.reply.get("outcomes", {})
    return all(outcomes.get(e.name, {}).get("kind") == "result" for e in got.exercises)


def _stub_code(chapter: Chapter) -> bytes | None:
    """The course's own stub of `chapter` (exercises/), as handed out; None where there is none."""
    return _read(REPO / "exercises" / f"{chapter.module}.py")


@dataclass
class RunStats:
    """Where a class run's time went, in seconds (tools/bench.py prints it): wall-clock from the start, and the CPU
    time of the judge's own threads. The workers' CPU is not here (they are other processes)."""

    workers: int = 0
    wall: float = 0.0
    first_request: float = 0.0  # when a worker first got a learner file: before it, only starting up
    last_reply: float = 0.0  # when the last worker reply came back: after it, only checking and reports
    worker_busy: float = 0.0  # summed over the workers: time spent grading a request (learner code, the spare)
    inputs_cpu: float = 0.0  # the judge building and pickling case inputs (once per run)
    check_cpu: float = 0.0  # the checking thread: loading results, running checks, reports' callbacks


class ClassRun:
    """One grade_many call: tasks (one per folder and chapter) taken by `n` worker threads, each on its own warm
    worker, and one checking thread that checks what they got back and hands the results out in order."""

    def __init__(self, sources: list[Path], plan, n: int, options: dict, checker: Checker,
                 on_done, on_result, lang: str | None, backend: sandbox.Backend, stats: RunStats | None = None):
        self.sources, self.plan, self.n, self.options, self.checker = sources, plan, n, options, checker
        self.stats = stats if stats is not None else RunStats()
        self.stats.workers, self._t0 = n, time.perf_counter()
        self._stats_lock = threading.Lock()
        self.on_done, self.on_result, self.lang, self.backend = on_done, on_result, lang, backend
        self.shown = i18n.language(lang) if lang != i18n.MARKED else ""
        self.tasks: queue.Queue = queue.Queue()  # lists of (i, j, src, chapter, exercises), taken whole: with spawn
        whole = backend.name == "spawn" and len(sources) >= 2 * n  # a whole student each, to keep their spare
        for i, src in enumerate(sources):
            items = [(i, j, src, chapter, exercises) for j, (chapter, exercises) in enumerate(plan)]
            for group in [items] if whole else [[item] for item in items]:
                self.tasks.put(group)
        self.found: dict[tuple[int, int], list[ExerciseResult]] = {}
        self.remaining = [len(plan)] * len(sources)
        self.to_check: queue.Queue = queue.Queue(maxsize=2 * n)  # (i, j, src, reply); None ends the checking thread
        self.check_failed: list[BaseException] = []  # the first error of the checking thread (a callback that raised)
        self.stubs = {j: _stub_code(chapter) for j, (chapter, _e) in enumerate(plan)}
        self.stub_replies: dict[int, _Reply] = {}  # chapter index -> the reply for the course's own untouched stub

    def run(self) -> list[list[ExerciseResult]]:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as in the learner's process, so inputs built from model outputs match bit for bit
        for k in range(self.n):
            worker_pool.prestart(k, self.backend)
        inputs = threading.Thread(target=self.build_inputs, name="grading-inputs", daemon=True)
        if self.tasks.qsize() > self.n:  # a class: more files than workers (one check() builds them as it goes)
            inputs.start()
        checking = threading.Thread(target=self.run_checks, name="grading-checks", daemon=True)
        checking.start()
        try:
            with ThreadPoolExecutor(max_workers=self.n) as ex:
                list(ex.map(self.run_worker, range(self.n)))
        finally:
            self.to_check.put(None)
            checking.join()
            if inputs.is_alive():
                inputs.join()  # it stops at the first chapter no task needs: none is left
            torch.set_num_threads(threads)
            self.stats.wall = time.perf_counter() - self._t0
        if self.check_failed:
            raise self.check_failed[0]
        return [[r for j in range(len(self.plan)) for r in self.found[(i, j)]] for i in range(len(self.sources))]

    def _build(self, chapter: Chapter, exercises: list[Exercise]) -> None:
        cpu = time.thread_time()
        for e in exercises:
            self.checker.blob(chapter, e)
        with self._stats_lock:
            self.stats.inputs_cpu += time.thread_time() - cpu

    def build_inputs(self) -> None:
        """Every chapter's inputs, in the order the tasks need them, built while the workers start and run the
        first files, so that a worker thread seldom waits for them (a failure is left for the worker thread)."""
        for chapter, exercises in self.plan:
            if self.tasks.empty():  # the worker threads have taken (and so built) every chapter
                return
            try:
                self._build(chapter, exercises)
            except Exception:
                return

    def run_worker(self, k: int) -> None:
        """Worker thread k: take tasks until none is left; each reply goes to the checking thread."""
        while True:
            try:
                group = self.tasks.get_nowait()
            except queue.Empty:
                return
            for i, j, src, chapter, exercises in group:
                try:
                    self._build(chapter, exercises)  # built ahead by build_inputs, or (the first ones) now
                    worker = worker_pool.warm_worker(k, self.backend)
                except WorkerFailed as exc:
                    got = [whole_exercise(chapter, e, ERROR, _("The grading worker could not start: {error}",
                                                               error=_detail(exc))) for e in exercises]
                else:
                    got = self._run(worker, j, src / f"{chapter.module}.py", chapter, exercises)
                self.to_check.put((i, j, src, got))

    def _run(self, worker: Worker, j: int, learner_file: Path, chapter: Chapter, exercises: list[Exercise]):
        """run_file, except for a file byte for byte the course's own stub of the chapter: that code is the
        course's, not a learner's, and gives the same reply every time, so it runs once per class and that reply
        is checked again for every student who handed it in untouched."""
        untouched = self.stubs[j] is not None and _read(learner_file) == self.stubs[j]
        if untouched and j in self.stub_replies:
            return self.stub_replies[j]
        start = time.perf_counter()
        owner = None if untouched else folder_digest(learner_file.parent)  # the same files: one spare (spawn)
        got = run_file(worker, chapter, exercises, learner_file, self.checker, **self.options, owner=owner)
        self._count(start, time.perf_counter())
        if untouched and isinstance(got, _Reply) and _complete_reply(got):
            self.stub_replies.setdefault(j, got)
        return got

    def _count(self, start: float, end: float) -> None:
        """A worker had a learner file from `start` to `end` (perf_counter): into the stats."""
        with self._stats_lock:
            st, start, end = self.stats, start - self._t0, end - self._t0
            st.first_request = min(st.first_request, start) if st.worker_busy else start
            st.last_reply, st.worker_busy = max(st.last_reply, end), st.worker_busy + end - start

    def run_checks(self) -> None:
        """The checking thread: drains to the end whatever fails, so no worker thread blocks."""
        cpu = time.thread_time()
        try:
            self._run_checks()
        finally:
            self.stats.check_cpu = time.thread_time() - cpu

    def _run_checks(self) -> None:
        while (item := self.to_check.get()) is not None:
            i, j, src, got = item
            graph = got.graph if isinstance(got, _Reply) else {}
            try:
                res = got if isinstance(got, list) else check_reply(got, self.checker)
            except Exception as exc:  # a bug in the judge: a named error for this chapter, never a lost student
                res = [whole_exercise(self.plan[j][0], e, ERROR, _(
                    "The judge failed while checking this ({error}); please report it.",
                    error=verbatim(f"{type(exc).__name__}: {exc}"))) for e in self.plan[j][1]]
            try:
                self.finish(i, j, src, complete(self.plan[j][1], res, graph))
            except BaseException as exc:  # on_result/on_done raised: re-raised in the caller's thread by run()
                self.found[(i, j)] = res
                self.check_failed.append(exc)

    def finish(self, i: int, j: int, src: Path, res: list[ExerciseResult]) -> None:
        if self.lang != i18n.MARKED:
            res = [i18n.localize(r, self.shown) for r in res]
        for r in res if self.on_result else ():
            self.on_result(r)
        self.found[(i, j)] = res
        self.remaining[i] -= 1
        if self.remaining[i] == 0 and self.on_done:  # in one thread: one student's report is never interleaved
            self.on_done(i, src, [r for jj in range(len(self.plan)) for r in self.found[(i, jj)]])


def grade_many(sources: list[Path], target: str | None = None, memory_mb: int = 6144, workers: int | None = None,
               checker: Checker | None = None, time_limit_s: float | None = None,
               on_done: Callable[[int, Path, list[ExerciseResult]], None] | None = None,
               blocked_extra: list[Path] = (), on_result: Callable[[ExerciseResult], None] | None = None,
               lang: str | None = None, backend: sandbox.Backend | None = None,
               stats: RunStats | None = None) -> list[list[ExerciseResult]]:
    """Grade several exercise folders (a class) on a pool of warm workers; results in `sources` order.

    workers: how many (None: worker_pool.default_workers(), the cores bounded by memory); never more than tasks.
    on_done(i, source, results) is called (from the checking thread) as each folder is finished;
    on_result(result) as each exercise is (one chapter's results together, never interleaved).
    lang: the language of names and messages (grading/i18n.py: None follows the locale; i18n.MARKED keeps marks).
    backend: fork or spawn (None: sandbox.backend(), decided here once for every worker of the run).
    stats: filled in with where the run's time went (RunStats), when given.
    """
    plan = plan_for(target)
    if plan_needs_model(plan):
        from lesson_utils.course_model import ensure_course_model

        ensure_course_model()  # build the cache once here, not concurrently in the workers
    sources = [Path(s).resolve() for s in sources]
    n = max(1, min(len(sources) * len(plan), workers or worker_pool.default_workers().count))
    options = dict(memory_mb=memory_mb, time_limit_s=time_limit_s, blocked_extra=blocked_extra)
    return ClassRun(sources, plan, n, options, checker or Checker(), on_done, on_result, lang,
                    backend or sandbox.backend(), stats).run()


def grade(folder: Path, target: str | None = None, memory_mb: int = 6144, workers: int | None = None,
          checker: Checker | None = None, time_limit_s: float | None = None,
          on_result=None, lang: str | None = None, backend: sandbox.Backend | None = None) -> list[ExerciseResult]:
    """Grade the exercise files in `folder` (an exercises/ or solutions/ folder).

    memory_mb limits the learner process's address space (POSIX only); time_limit_s, when given,
    replaces every exercise's own time limit. on_result, when given, is called with each
    ExerciseResult as soon as its chapter is graded (from a worker thread), for live output.
    """
    return grade_many([Path(folder)], target, memory_mb, workers, checker, time_limit_s, on_result=on_result,
                      lang=lang, backend=backend)[0]
