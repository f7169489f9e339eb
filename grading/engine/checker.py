"""The judge's checks on what a worker sent back: case inputs built once, each case's check run on the learner's
output (remembered per output digest), one status per exercise, and each result record completed once (complete:
points, hint, summary, the learner's failing functions it calls) so that reports only format it."""
from __future__ import annotations

import hashlib
import threading

import torch

from ..i18n import _, verbatim
from ..model import (ERROR, NOT_ATTEMPTED, PASSED, WRONG, CaseResult, Chapter, CheckFailed, Exercise, ExerciseResult,
                     score)
from ..worker.transport import pickle_inputs


class Checker:
    """Runs the judge-side checks; case inputs are built once and reused across students.

    Checks run one at a time under a lock, inside `torch.random.fork_rng`, so that chapters graded
    in parallel threads never interleave their use of torch's global random generator.
    """

    def __init__(self):
        self._inputs: dict[tuple[str, str, int], tuple] = {}
        self._blobs: dict[str, bytes] = {}
        self._verdicts: dict[tuple, tuple[str, str, str]] = {}
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
                self._blobs[key] = pickle_inputs({ex.name: [self.inputs(chapter, ex, i)
                                                                 for i in range(len(ex.cases))]})
        return key, self._blobs[key]

    def grade(self, chapter: Chapter, ex: Exercise, raw: object) -> ExerciseResult:
        with self._lock, torch.random.fork_rng():
            return self._grade(chapter, ex, raw)

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
            res = CaseResult(case.name, False, float(entry.get("seconds", 0.0)))
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
