"""The judge's side of grading: runs learner code in child processes and checks what comes back."""
from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .compare import CheckFailed
from .spec import Chapter, Exercise

REPO = Path(__file__).resolve().parent.parent
IMPORT_TIMEOUT_S = 120.0  # importing torch and the learner file, before any exercise starts
SETUP_TIMEOUT_S = 60.0  # building one exercise's inputs (outside its own time limit)

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

    def grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        with self._lock, torch.random.fork_rng():
            return self._grade(chapter, ex, raw)

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
                try:
                    case.check(entry["output"], self.inputs(chapter, ex, i))
                    res.passed = True
                except NotImplementedError:
                    not_impl += 1
                    res.message = "not answered yet"
                except CheckFailed as exc:
                    res.message = str(exc)
                except Exception as exc:  # an odd result type, or a bug in the check itself
                    res.message = (f"the check could not process your result "
                                   f"({type(exc).__name__}: {exc}). If your result has the documented type and "
                                   "shape, this may be a bug in the course's checks: please report it.")
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


def _whole_exercise(chapter: Chapter, ex: Exercise, status: str, message: str) -> ExerciseResult:
    return ExerciseResult(chapter.number, ex.name, status, [CaseResult(c.name, False, 0.0, message) for c in ex.cases], message)


def _run_child(chapter: Chapter, exercises: list[Exercise], learner_file: Path, blocked: list[Path],
               memory_mb: int, checker: Checker, time_limit_s: float | None) -> list[ExerciseResult]:
    """Grade `exercises` of one chapter, restarting the child after a timeout or a crash."""
    results: dict[str, ExerciseResult] = {}
    pending = list(exercises)
    while pending:
        with tempfile.TemporaryDirectory(prefix="judge-") as tmp:
            out = Path(tmp)
            request = {
                "chapter_module": chapter.module, "learner_file": str(learner_file), "out_dir": str(out),
                "exercises": [e.name for e in pending], "memory_mb": memory_mb,
                "blocked_dirs": [str(b) for b in blocked],
            }
            (out / "request.json").write_text(json.dumps(request), encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
            env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1",
                       OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
            with open(out / "output.txt", "wb") as log:
                proc = subprocess.Popen([sys.executable, "-m", "grading.child", str(out / "request.json")],
                                        cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
                started: dict[str, float] = {}
                try:
                    checker.prepare(chapter, pending)
                except Exception:
                    pass  # an input that fails to build here is reported when its case is checked
                current: Exercise | None = None
                finished: set[str] = set()
                launched = last_progress = time.monotonic()
                killed_for: str | None = None
                while proc.poll() is None:
                    time.sleep(0.02)
                    now = time.monotonic()
                    for e in pending:
                        if e.name not in started and (out / f"{e.name}.started").exists():
                            started[e.name] = last_progress = now
                            current = e
                        if e.name not in finished and (out / f"{e.name}.pt").exists():
                            finished.add(e.name)
                            last_progress = now
                    unfinished = [e for e in pending if e.name not in finished]
                    if current is None:
                        if now - launched > IMPORT_TIMEOUT_S:
                            killed_for = "import"
                    elif current.name not in finished:
                        if now - started[current.name] > (time_limit_s or current.timeout_s):
                            killed_for = current.name
                    elif unfinished and now - last_progress > SETUP_TIMEOUT_S:
                        killed_for = unfinished[0].name  # stuck before its clock started (e.g. torch patched to hang)
                    if killed_for:
                        proc.kill()
                        proc.wait()
                        break
            import_error = out / "import_error.txt"
            if import_error.exists():
                msg = import_error.read_text(encoding="utf-8")
                return [_whole_exercise(chapter, e, ERROR, msg) for e in exercises]
            if killed_for == "import":
                msg = f"Importing your file took more than {IMPORT_TIMEOUT_S:.0f} s (code at module level that never ends?)."
                return [_whole_exercise(chapter, e, TIMEOUT, msg) for e in exercises]
            still = []
            for e in pending:
                path = out / f"{e.name}.pt"
                if path.exists():
                    try:
                        raw = torch.load(path, weights_only=True)
                        results[e.name] = checker.grade(chapter, e, raw)
                    except Exception as exc:
                        results[e.name] = _whole_exercise(
                            chapter, e, ERROR, f"Your result could not be read back safely ({type(exc).__name__}); "
                                               "return plain tensors, numbers or tuples of them.")
                elif e.name == killed_for:
                    results[e.name] = _whole_exercise(
                        chapter, e, TIMEOUT,
                        f"Stopped after {time_limit_s or e.timeout_s:.0f} s: an endless loop, or something far too slow?")
                elif e.name in started:
                    results[e.name] = _whole_exercise(
                        chapter, e, ERROR, f"The grading process ended while running your code (exit code {proc.returncode}): "
                                           "sys.exit/os._exit, a crash, or the memory limit.")
                else:
                    still.append(e)
            if len(still) == len(pending):  # no progress at all: do not loop forever
                return [results.get(e.name) or _whole_exercise(chapter, e, ERROR, "The grading process failed to start:\n"
                                                                + (out / "output.txt").read_text(errors="replace")[-2000:])
                        for e in exercises]
            pending = still
    return [results[e.name] for e in exercises]


_REPORT_LOCK = threading.Lock()  # one chapter's results reach on_result together, never interleaved


def _report(results: list[ExerciseResult], on_result) -> list[ExerciseResult]:
    with _REPORT_LOCK:
        for r in results if on_result else ():
            on_result(r)
    return results


def grade(source: Path, target: str | None = None, memory_mb: int = 6144, workers: int | None = None,
          checker: Checker | None = None, time_limit_s: float | None = None,
          on_result=None) -> list[ExerciseResult]:
    """Grade the exercise files in `source` (an exercises/ or solutions/ folder).

    memory_mb limits the learner process's address space (POSIX only); time_limit_s, when given,
    replaces every exercise's own time limit. on_result, when given, is called with each
    ExerciseResult as soon as its chapter is graded (from a worker thread), for live output.
    """
    source = Path(source).resolve()
    checker = checker or Checker()
    plan = select(load_chapters(), target)
    if any(e.uses_course_model for _, es in plan for e in es):
        from lesson_utils.course_model import ensure_course_model

        ensure_course_model()  # build the cache once here, not concurrently in the children
    is_solutions = source == (REPO / "solutions").resolve()
    blocked = [] if is_solutions else [p for p in {REPO / "solutions", source.parent / "solutions"} if p.exists()]

    def one(item):
        chapter, exercises = item
        learner_file = source / f"{chapter.module}.py"
        if not learner_file.exists():
            return [_whole_exercise(chapter, e, NOT_ATTEMPTED, f"{learner_file} does not exist.") for e in exercises]
        return _run_child(chapter, exercises, learner_file, blocked, memory_mb, checker, time_limit_s)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the learner's process, so inputs built from model outputs match bit for bit
    try:
        with ThreadPoolExecutor(max_workers=workers or min(2, os.cpu_count() or 1)) as pool:
            return [r for rs in pool.map(lambda item: _report(one(item), on_result), plan) for r in rs]
    finally:
        torch.set_num_threads(threads)
