"""One grading request (a chapter of one learner file) in as few learner processes as its inputs allow, with
retries for the exercises a process never started and shorter limits for those that call a function that
already timed out."""
from __future__ import annotations

import signal

from ..i18n import _, verbatim
from . import readonly
from .limits import DEPENDENT_TIMEOUT_S
from .supervisor import supervise


def batches(exercises: list[dict], shared_keys: set[str]) -> list[list[dict]]:
    """Exercises grouped into one learner process each: every exercise whose inputs are private copies runs in one,
    followed by at most one exercise that gets the worker's own course model or E (it runs last in its process, so
    whatever it changes there reaches no other exercise)."""
    private = [e for e in exercises if e["key"] not in shared_keys]
    shared = [e for e in exercises if e["key"] in shared_keys]
    if not shared:
        return [private] if private else []
    return [private + shared[:1]] + [[e] for e in shared[1:]]


def _timed_out_dependency(ex: dict, outcomes: dict[str, dict], msg: dict) -> str | None:
    """The learner's own function that `ex` seems to call (the request's call_graph, read from the file's syntax by
    the judge) and that timed out while it ran, or None."""
    for other in msg.get("call_graph", {}).get(ex["name"], ()):
        if outcomes.get(other, {}).get("kind") == "timeout" and not outcomes[other].get("at_import"):
            return other
    return None


def _cut_note(outcome: dict, dep: str, seconds: float) -> dict:
    return dict(outcome, message=outcome["message"] + _(" It calls your {dep}, which timed out above, so its limit "
                                                        "was cut to {seconds:.0f} s: fix {dep} first, then grade "
                                                        "again.", dep=dep, seconds=seconds))


def _run_batch(launcher, msg: dict, source: bytes, batch: list[dict], inputs: dict, root: str,
               outcomes: dict[str, dict], blob_of: dict[str, bytes]) -> bool:
    """Run one batch until each of its exercises has an outcome; False when an import failure answered them all."""
    short = float(msg.get("dependent_timeout_s", DEPENDENT_TIMEOUT_S))
    pending = [e for e in batch if e["name"] not in outcomes]
    while pending:
        deps = {e["name"]: dep for e in pending if (dep := _timed_out_dependency(e, outcomes, msg))}
        run = dict(msg, timeouts={n: min(t, short) if n in deps else t for n, t in msg["timeouts"].items()})
        got, got_blobs = supervise(launcher, run, source, pending, {e["name"]: inputs[e["name"]] for e in pending},
                                   root)
        blobs = iter(got_blobs)
        for e in pending:
            o = got.get(e["name"])
            if o is None:
                continue
            if o["kind"] == "result":
                blob_of[e["name"]] = next(blobs)
            elif o["kind"] == "timeout" and e["name"] in deps and not o.get("at_import"):
                o = _cut_note(o, deps[e["name"]], short)
            outcomes[e["name"]] = o
        first = next((o for o in got.values() if o.get("at_import")), None)
        if first is not None:
            for e in msg["exercises"]:
                outcomes.setdefault(e["name"], dict(first))
            return False
        if pending[0]["name"] not in got:  # the process stopped before its first exercise started
            outcomes[pending[0]["name"]] = {"kind": "died", "message": _("The grading process stopped before "
                                                                         "this exercise started.")}
        pending = [e for e in pending if e["name"] not in outcomes]
    return True


def _at_line(line: int, source: bytes) -> str:
    """' at line N of your file (the code)', or '' when `line` (what the crashed process printed) is not in `source`."""
    lines = source.decode("utf-8", "replace").splitlines()
    code = lines[line - 1].strip()[:120] if 0 < line <= len(lines) else ""
    return _(" at line {line} of your file ({code})", line=line, code=verbatim(code)) if code else ""


def _crashed(outcome: dict, source: bytes, sealed: bool) -> dict:
    """A process that died while running an exercise, worded with the learner's line it was at (when known), and
    as a write into the read-only course model or E when it was given them and the fault was a memory fault."""
    where = _at_line(outcome.get("line", 0), source)
    if sealed and outcome.get("status") == -signal.SIGSEGV:
        return dict(outcome, message=_wrote_read_only(where))
    return dict(outcome, message=outcome["message"] + _(" It stopped{where}.", where=where)) if where else outcome


def _wrote_read_only(where: str) -> str:
    """Why a process given the read-only course model or E (grading/worker/readonly.py) ended with a memory fault;
    `where`: _at_line's text."""
    return _("Your function stopped with a memory fault (SIGSEGV){where}. This exercise gives it the course model "
             "or its E, which are read-only while you are graded, so a write into a model's weights or E (mul_, "
             "add_, zero_, `+=` or `x[...] = ...` on one of them or on a view of one) ends the process. Leave your "
             "inputs as they were: compute a new tensor instead.", where=where)


def grade(launcher, msg: dict, source: bytes, inputs: dict[str, list], shared_keys: set[str],
          root: str) -> tuple[dict[str, dict], list[bytes]]:
    """Grade every requested exercise: (outcomes by name in request order, result blobs in that order).

    inputs: exercise name -> its cases' inputs. Each learner process resets torch's global settings between
    exercises (grading/worker/learner_process.py); if one dies or is stopped mid-batch, the exercises it never
    started go to a fresh one. An import error or a tampered channel at import time is the same for every exercise,
    so it is reported for all of them from the first process. An exercise that seems to call one of the learner's
    own functions that already timed out still runs, but with its limit cut to msg["dependent_timeout_s"]; if it
    times out too, its message names that function."""
    outcomes: dict[str, dict] = {}
    blob_of: dict[str, bytes] = {}
    shared = set() if launcher.copies_shared else shared_keys  # spawn: one spare per request (see transport.py)
    for batch in batches(list(msg["exercises"]), shared):
        if not _run_batch(launcher, msg, source, batch, inputs, root, outcomes, blob_of):
            break
    sealed = shared_keys if getattr(launcher, "zygote", None) is not None and readonly.available() else set()
    for e in msg["exercises"]:
        if outcomes[e["name"]]["kind"] == "died":
            outcomes[e["name"]] = _crashed(outcomes[e["name"]], source, e["key"] in sealed)
    names = [e["name"] for e in msg["exercises"]]
    return {n: outcomes[n] for n in names}, [blob_of[n] for n in names if outcomes[n]["kind"] == "result"]
