"""The judge's checks on what a worker sent back: case inputs built once, each case's check run on the learner's
output (remembered per output digest), one status per exercise, and each result record completed once (complete:
points, hint, summary, the learner's failing functions it calls) so that reports only format it.

What comes back from a learner's process is bounded before the judge works on it (`measure`): its size as the
checks will see it (every distinct tensor view at full size, so a stride-0 view of 2**29 elements counts as
what it expands to) and its number of values; and each exercise's checking stops after CHECK_TIMEOUT_S. Over a bound
is that student's named non-pass, never a stalled class."""
from __future__ import annotations

import copy
import ctypes
import hashlib
import json
import threading
from contextlib import contextmanager
from typing import Callable

import torch

from ..i18n import _, verbatim
from ..model import (ERROR, NOT_ATTEMPTED, PASSED, WRONG, CaseResult, Chapter, CheckFailed, Exercise, ExerciseResult,
                     score)
from ..worker.limits import RESULT_LIMIT
from ..worker.transport import pickle_inputs

CHECK_BYTES = RESULT_LIMIT  # one exercise's result as the checks see it: distinct tensor views at full size
CHECK_ITEMS = 1_000_000  # values (tensors, numbers, strings, containers) in one exercise's result
CHECK_DEPTH = 100  # nesting of lists, tuples and dicts
CHECK_TIMEOUT_S = 60.0  # checking one exercise's result (the checks take milliseconds to a few seconds)


class CheckTimeout(BaseException):
    """Raised in the checking thread when one result's checking runs past CHECK_TIMEOUT_S (a BaseException, so
    no check's `except Exception` takes it for a verdict)."""


@contextmanager
def time_limit(seconds: float):
    """Raise CheckTimeout in this thread once `seconds` have passed inside the block. Python code is stopped at
    its next bytecode; one torch operation runs to its end, which CHECK_BYTES keeps short."""
    tid, lock, state = threading.get_ident(), threading.Lock(), {"armed": True, "fired": False}

    def fire() -> None:
        with lock:
            if state["armed"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(CheckTimeout))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            state["armed"] = False
            if state["fired"]:  # fired but perhaps not yet delivered: it must not land in the caller's code
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), None)
        timer.cancel()


def measure(value: object) -> tuple[int, int]:
    """(bytes, values) of a result as the checks see it: each distinct tensor view at its full size (numel x
    element size, whatever its strides), counted once however often it is referenced. Raises ValueError past
    CHECK_DEPTH or CHECK_ITEMS, and stops counting bytes past CHECK_BYTES."""
    seen_views: set[tuple] = set()
    seen_objects: set[int] = set()
    nbytes = items = 0
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        items += 1
        if items > CHECK_ITEMS or depth > CHECK_DEPTH:
            raise ValueError("too many values" if items > CHECK_ITEMS else "nested too deeply")
        if isinstance(v, torch.Tensor):
            view = (v.untyped_storage().data_ptr() if not v.is_meta else id(v), str(v.dtype), tuple(v.shape),
                    v.stride(), v.storage_offset())
            if view not in seen_views:
                seen_views.add(view)
                nbytes += v.numel() * v.element_size()
                if nbytes > CHECK_BYTES:
                    return nbytes, items
        elif isinstance(v, (list, tuple, dict)):
            if id(v) in seen_objects:  # one container referenced many times is walked once
                continue
            seen_objects.add(id(v))
            children = [x for kv in v.items() for x in kv] if isinstance(v, dict) else list(v)
            if len(children) > CHECK_ITEMS:
                raise ValueError("too many values")
            stack.extend((x, depth + 1) for x in children)
    return nbytes, items


def over_bounds(raw: object) -> str:
    """Why `raw` (one exercise's results) is more than the judge will check, in the learner's words; '' if it is not."""
    try:
        nbytes, _items = measure(raw)
    except ValueError:
        return _("Your result holds more than {n} values (or is nested more than {depth} deep); the judge does not "
                 "check it. Return the documented type and shape.", n=CHECK_ITEMS, depth=CHECK_DEPTH)
    if nbytes > CHECK_BYTES:
        return _("Your result is larger than the judge checks: more than {mb} MB once every tensor is counted at "
                 "its full size (an .expand()ed or stride-0 tensor counts as what it expands to). Return the "
                 "documented type and shape.", mb=CHECK_BYTES >> 20)
    return ""


class Checker:
    """Runs the judge-side checks; case inputs are built once and reused across students.

    Checks run one at a time under a lock, inside `torch.random.fork_rng`, so that chapters graded
    in parallel threads never interleave their use of torch's global random generator.
    """

    def __init__(self):
        self._inputs: dict[tuple[str, str, int], tuple] = {}
        self._blobs: dict[str, bytes] = {}
        self._verdicts: dict[tuple, tuple[str, str, str]] = {}
        self._replies: dict[tuple, ExerciseResult] = {}
        self._timeouts = 0
        self._lock = threading.Lock()

    def reply(self, chapter: Chapter, ex: Exercise, blob: bytes, watched: object, facts: frozenset,
              judge: Callable[[], ExerciseResult]) -> ExerciseResult:
        """`judge()`'s verdict on one exercise's result bytes, judged once per distinct bytes (with what was watched
        of its inputs and what its source uses): a class's equal answers are loaded and checked once, and each
        student gets a copy. A verdict cut short by CHECK_TIMEOUT_S is not kept."""
        key = (chapter.module, ex.name, hashlib.sha256(blob).digest(), json.dumps(watched, sort_keys=True),
               tuple(sorted(facts)))
        with self._lock:
            known = self._replies.get(key)
        if known is not None:
            return copy.deepcopy(known)
        timeouts = self._timeouts
        res = judge()
        if self._timeouts == timeouts:
            with self._lock:
                self._replies[key] = copy.deepcopy(res)
        return res

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
                self._blobs[key] = pickle_inputs({ex.name: [self.inputs(chapter, ex, i)
                                                                 for i in range(len(ex.cases))]})
        return key, self._blobs[key]

    def grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        """The judge's verdict on one exercise's results from the learner's process: bounded in size first, then
        checked within CHECK_TIMEOUT_S."""
        too_big = over_bounds(raw)
        if too_big:
            return whole_exercise(chapter, ex, ERROR, too_big)
        try:
            with self._lock, torch.random.fork_rng(), time_limit(CHECK_TIMEOUT_S):
                return self._grade(chapter, ex, raw)
        except CheckTimeout:
            self._timeouts += 1
            return whole_exercise(chapter, ex, ERROR, _(
                "The judge stopped checking your result after {seconds:.0f} s (far longer than checking a correct "
                "answer takes). Return the documented type and shape.", seconds=CHECK_TIMEOUT_S))

    def _verdict(self, chapter: Chapter, ex: Exercise, i: int, output: object) -> tuple[str, str, str]:
        """(kind, message, named mistake) of case i's check on `output`; remembered per output digest, so a class
        of equal answers runs each check once (checks are deterministic: fixed inputs, forked RNG)."""
        try:
            key = (chapter.module, ex.name, i, output_digest(output))
        except Exception:  # an output the digest cannot read (an odd tensor): check it, remember nothing
            key = None
        if key in self._verdicts:
            return self._verdicts[key]
        try:
            ex.cases[i].check(output, self.inputs(chapter, ex, i))
            verdict = ("pass", "", "")
        except NotImplementedError:
            verdict = ("not answered", _("not answered yet"), "")
        except CheckFailed as exc:
            verdict = ("fail", exc.message, exc.mistake)
        except Exception as exc:  # an odd result type, or a bug in the check itself
            verdict = ("error", _("the check could not process your result ({error}). If your result has the "
                                  "documented type and shape, this may be a bug in the course's checks: please "
                                  "report it.", error=verbatim(f"{type(exc).__name__}: {exc}")), "")
        if key is not None:
            self._verdicts[key] = verdict
        return verdict

    def _grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        expected_names = [c.name for c in ex.cases]
        if (not isinstance(raw, list) or [e.get("name") if isinstance(e, dict) else None for e in raw] != expected_names
                or not expected_names):
            return whole_exercise(chapter, ex, ERROR, _("The grading process sent back results that do not match "
                                                         "this exercise's cases; they were not trusted."))
        cases, not_impl, errors = [], 0, 0
        for i, entry in enumerate(raw):
            case = ex.cases[i]
            res = CaseResult(case.name, False, 0.0)  # its seconds come apart from the result (timed)
            if entry.get("not_implemented"):
                not_impl += 1
                res.message = _("not implemented yet (raises NotImplementedError)")
            elif "unsafe" in entry or "unsaved" in entry:
                errors += 1
                res.message = (_("Your function returned something the judge cannot read: {error}",
                                 error=verbatim(entry["unsafe"])) if "unsafe" in entry else
                               _("the result could not be saved ({error})", error=verbatim(entry["unsaved"])))
            elif "error" in entry:
                errors += 1
                error = str(entry["error"])
                res.error_type = class_name(entry.get("error_type"))
                res.message = _("your code raised an error:\n{error}", error=verbatim(error))
                if entry.get("error_type") == "Refused":  # grading/worker/guard.py's words are in the traceback
                    res.message += "\n" + _("(The judge's sandbox refused this, as the last line above says: while "
                                            "grading, code may not start programs, write outside its scratch "
                                            "folder, read the judge's files, use the network or load native code.)")
                if entry.get("error_type") in ("MemoryError", "OutOfMemoryError") or "can't allocate memory" in error:
                    res.message += "\n" + _("(The grading process has a memory limit; does your code build something "
                                            "huge?)")
            else:
                verdict = self._verdict(chapter, ex, i, entry.get("output"))
                res.passed = verdict[0] == "pass"
                res.message, res.mistake = verdict[1], verdict[2]
                not_impl += verdict[0] == "not answered"
                errors += verdict[0] == "error"
            cases.append(res)
        if all(c.passed for c in cases):
            status = PASSED
        elif not_impl == len(cases):
            status = NOT_ATTEMPTED
        elif errors:
            status = ERROR
        else:
            status = WRONG
        return ExerciseResult(chapter.number, ex.name, status, cases, is_quiz=ex.is_quiz)


def output_digest(value: object) -> str:
    """A digest of a learner output that two outputs share only if every check must treat them alike:
    types, dtypes, shapes, strides, values, and which tensors share a storage (tied weights). Each storage's bytes
    are hashed once, however many tensors view it (a view's values follow from its storage and its layout)."""
    h = hashlib.sha256()
    storages: dict[int, int] = {}

    def walk(v: object) -> None:
        h.update(type(v).__qualname__.encode() + b"\0")
        if isinstance(v, torch.Tensor):
            storage = v.untyped_storage()
            ptr = storage.data_ptr()
            new = ptr not in storages
            sid = storages.setdefault(ptr, len(storages))
            h.update(repr((str(v.dtype), tuple(v.shape), v.stride(), v.storage_offset(), sid, v.requires_grad,
                           v.is_conj(), v.is_neg(), v.is_meta, storage.nbytes())).encode())
            if new and storage.nbytes() and not v.is_meta:
                h.update(torch.empty(0, dtype=torch.uint8).set_(storage).numpy())
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


def timed(res: ExerciseResult, seconds: object) -> ExerciseResult:
    """`res` with each case's seconds as the learner's process measured them (sent apart from its result, one
    finite number per case; anything else, from a worker the judge does not take on its word, leaves them at 0)."""
    if (isinstance(seconds, list) and len(seconds) == len(res.cases)
            and all(type(s) in (int, float) and 0 <= s < 1e6 for s in seconds)):
        for case, s in zip(res.cases, seconds):
            case.seconds = float(s)
    return res


def class_name(value: object) -> str:
    """`value` if it can be the name of an exception class (the learner's process sends it, so it is checked like
    anything else from there), else ''."""
    return value if isinstance(value, str) and value.isidentifier() and len(value) <= 100 else ""


def whole_exercise(chapter: Chapter, ex: Exercise, status: str, message: str,
                   import_error: str = "") -> ExerciseResult:
    """One status and message for every case of `ex` (nothing was checked case by case); `import_error`: the class
    of what importing the learner's file raised, when that is why."""
    return ExerciseResult(chapter.number, ex.name, status, [CaseResult(c.name, False, 0.0, message) for c in ex.cases],
                          message, is_quiz=ex.is_quiz, import_error=import_error)


def complete(exercises: list[Exercise], results: list[ExerciseResult],
             calls: dict[str, list[str]]) -> list[ExerciseResult]:
    """Fill in what every report shows and no report should look up again: points earned and possible, the
    summary, the hint, and which of the learner's own failing exercise functions each failing result calls
    (`calls`: grading/dependencies.py's call graph of the learner's file, read once per file)."""
    by_name = {r.name: r for r in results}
    defs = {e.name: e for e in exercises}
    for r in results:
        ex = defs.get(r.name)
        if ex is not None:
            r.max_points = float(ex.points)
            r.points = score(ex, [c.passed for c in r.cases], r.passed)
            r.summary, r.hint = ex.summary, ex.hint
        r.fails_through = [] if r.passed else [(o, by_name[o].status) for o in calls.get(r.name, ())
                                               if o in by_name and not by_name[o].passed]
    return results
