"""The warm grading worker: torch, transformers and the course model loaded once; a fresh child forked
per (learner file, chapter) to run the learner's code.

Started by the judge (grading/engine/workers.py) as `python -m grading.worker.main`, inside bubblewrap where it
runs (grading/engine/sandbox.py mounts grading/worker/ and nothing else of grading/). It talks to the judge over
its stdin/stdout with grading.worker.wire frames:

    judge -> worker  {"op": "inputs", "key": K} + pickled inputs   (built by the judge; cached here)
                     {"op": "grade", "id", "filename", "module", "exercises": [...], "call_graph", "timeouts": {name: s},
                      "import_timeout_s", "setup_timeout_s", "dependent_timeout_s", "memory_mb", "blocked": [...]}
                      + the learner's code
                     {"op": "exit"}
    worker -> judge  {"op": "ready", "pid"}, {"op": "ack"}, {"op": "graded", "id", "outcomes", "output", "seconds"}
                      + one blob per outcome of kind "result" (torch.save bytes, never unpickled here)

The worker never loads a check module. It marks itself non-dumpable so a child cannot open its pipes
through /proc, and each child closes every descriptor but its own two pipes before learner code runs.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import signal
import tempfile
import time

from ..i18n import _
from . import children, wire
from .limits import DEPENDENT_TIMEOUT_S, IMPORT_TIMEOUT_S, SETUP_TIMEOUT_S
from .transport import InputsUnpickler, shared_objects

OUTPUT_LIMIT = 8 << 20  # bytes a child may print in total before it is stopped
OUTPUT_KEEP = 16 << 10  # bytes of that output sent back in the reply's "output" (the judge does not show it today)
RESULT_LIMIT = 768 << 20  # bytes of results one child may send back
START_TIMEOUT_S = 180.0  # a spare (spawn backend) importing torch and transformers before it can take its job

LAUNCHER: "children.ForkLauncher | children.SpawnLauncher" = children.ForkLauncher()  # set by main()
_INPUTS: dict[str, dict[str, list]] = {}  # key -> exercise name -> inputs per case
_SHARED: set[str] = set()  # keys whose inputs hold the worker's own course model, tokenizer or E (not copies)


def _nondumpable() -> None:
    """PR_SET_DUMPABLE 0: same-user processes (the children) cannot ptrace us or open /proc/<pid>/fd."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass  # not Linux: there is no /proc to protect


def _kill_strays() -> None:
    """Inside bubblewrap (its own PID namespace) SIGKILL every process but bubblewrap's and this worker: a daemon
    that native code in a child started in a session of its own must not live on to reach the next child.
    Outside the sandbox other processes of this user are not ours to kill, and Python code cannot fork there."""
    if not os.environ.get("GRADING_IN_BWRAP"):
        return
    spare = {1, os.getpid(), os.getppid(), *LAUNCHER.pids()}
    for _ in range(5):  # again, for what forked while we were killing
        seen = False
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in spare:
                try:
                    os.kill(int(name), signal.SIGKILL)
                    seen = True
                except OSError:
                    pass
        if not seen:
            return
        time.sleep(0.002)


def _clean_tmp(root: str, keep: set[str]) -> None:
    """Remove everything a child left in the scratch root (and /dev/shm inside the sandbox)."""
    for base in (root, "/dev/shm") if os.environ.get("GRADING_IN_BWRAP") else (root,):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            path = os.path.join(base, name)
            if path in keep:
                continue
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass


def grade_once(msg: dict, source: bytes, exercises: list[dict], root: str) -> tuple[dict, list[bytes], bytes]:
    """Fork one child for `exercises` (in order); outcomes for those it finished or failed, in order.

    Returns (outcomes by name, result blobs in outcome order, captured output). An exercise with no
    outcome was never started (the child died before it) and should be tried again.
    """
    scratch = tempfile.mkdtemp(prefix="scratch-", dir=root)
    learner_file = os.path.join(scratch, msg["filename"])
    with open(learner_file, "wb") as f:
        f.write(source)
    _kill_strays()
    inputs = {e["name"]: _INPUTS[e["key"]][e["name"]] for e in exercises}
    child = LAUNCHER.start(msg, exercises, inputs, scratch, learner_file)
    outcomes: dict[str, dict] = {}
    blobs: list[bytes] = []
    output, printed = bytearray(), 0
    parser = wire.FrameParser(RESULT_LIMIT)
    names = [e["name"] for e in exercises]
    import_s = float(msg.get("import_timeout_s", IMPORT_TIMEOUT_S))
    setup_s = float(msg.get("setup_timeout_s", SETUP_TIMEOUT_S))
    state, current = ("starting", None) if child.starting else ("import", None)
    deadline = time.monotonic() + (START_TIMEOUT_S if child.starting else import_s)
    received, failure = 0, None  # failure: (kind, message) that ends this child
    code = None  # the child's return code once it has ended

    open_pipes = 2
    while open_pipes and failure is None:
        timeout = deadline - time.monotonic()
        if timeout <= 0:
            if state == "starting":
                failure = ("timeout", _("The grading process did not start within {seconds:.0f} s (the machine is "
                                        "very busy?).", seconds=START_TIMEOUT_S))
            elif state == "import":
                failure = ("timeout", _("Importing your file took more than {seconds:.0f} s (code at module level "
                                        "that never ends?).", seconds=import_s))
            elif state == "running":
                failure = ("timeout", _("Stopped after {seconds:.0f} s: an endless loop, or something far too "
                                        "slow?", seconds=msg['timeouts'][current]))
            else:
                failure = ("timeout", _("Stopped: no progress for {seconds:.0f} s between exercises (something "
                                        "patched at import time that hangs?).", seconds=setup_s))
            break
        if state == "done":
            # Everything arrived; wait for the child to exit, not for pipes that a process it left behind may hold.
            code = child.poll()
            if code is not None:
                _kill_strays()
                break
            timeout = min(timeout, 0.02)
        event = child.next_event(timeout)
        if event is None:
            continue
        channel, data = event
        if not data:
            open_pipes -= 1
            continue
        if channel == "output":
            printed += len(data)
            if len(output) < OUTPUT_KEEP:
                output += data[:OUTPUT_KEEP - len(output)]
            if printed > OUTPUT_LIMIT:
                failure = ("output_limit", _("Your code printed more than {mb} MB; it was stopped. Print less (a "
                                             "loop that prints every step?).", mb=OUTPUT_LIMIT >> 20))
            continue
        received += len(data)
        try:
            if received > RESULT_LIMIT:
                raise wire.WireError(f"more than {RESULT_LIMIT >> 20} MB of results")
            frames = parser.feed(data)
        except wire.WireError as exc:
            failure = ("too_big", _("Your results are too large to send back (more than {mb} MB); return smaller "
                                    "values.", mb=RESULT_LIMIT >> 20))
            break
        for kind, body in frames:
            expected_next = names[len(outcomes)] if len(outcomes) < len(names) else None
            if state == "starting" and kind == wire.READY:
                state, deadline = "import", time.monotonic() + import_s
            elif state == "import" and kind == wire.IMPORT_ERROR:
                failure = ("import_error", body.decode("utf-8", "replace"))
            elif state == "import" and kind == wire.IMPORTED:
                state, deadline = "between", time.monotonic() + setup_s
            elif state == "between" and kind == wire.STARTED and body.decode(errors="replace") == expected_next:
                state, current = "running", expected_next
                deadline = time.monotonic() + msg["timeouts"][current]
            elif state == "running" and kind == wire.RESULT:
                outcomes[current] = {"kind": "result"}
                blobs.append(body)
                state, current, deadline = "between", None, time.monotonic() + setup_s
            elif state == "between" and kind == wire.DONE and expected_next is None:
                state, deadline = "done", time.monotonic() + setup_s
            else:
                failure = ("protocol", _("The grading channel received something out of order (learner code "
                                         "writing to the judge's pipe?); nothing from this run was trusted."))
            if failure:
                break
    if failure:
        child.kill()
    status = code if code is not None else child.wait()
    child.kill()  # anything it left behind in its session
    _kill_strays()  # and anything that left the session (setsid from native code)
    _clean_tmp(root, set())

    at_import = state in ("starting", "import")
    if failure and failure[0] == "protocol":
        outcomes, blobs = {}, []  # a forged frame may have come at any time: trust nothing from this child
        for n in names:
            outcomes[n] = {"kind": "protocol", "message": failure[1], "at_import": at_import}
    elif failure:
        kind, message = failure
        targets = names if at_import else [current or next((n for n in names if n not in outcomes), None)]
        for n in targets:
            if n and n not in outcomes:
                outcomes[n] = {"kind": kind, "message": message, "at_import": at_import}
    elif state != "done":
        how = children.describe_exit(status)
        if state in ("starting", "import"):
            for n in names:
                outcomes[n] = {"kind": "died", "at_import": True,
                               "message": _("The grading process ended while importing your file ({how}): "
                                            "sys.exit/os._exit at module level, a crash, or the memory limit.",
                                            how=how)}
        elif state == "running":
            outcomes[current] = {"kind": "died", "message": _("The grading process ended while running your code "
                                                             "({how}): sys.exit/os._exit, a crash, or the memory "
                                                             "limit.", how=how)}
    return outcomes, blobs, bytes(output)


def _batches(exercises: list[dict]) -> list[list[dict]]:
    """Exercises grouped into one child each: every exercise whose inputs are private copies runs in one child,
    followed by at most one exercise that gets the worker's own course model or E (it runs last in its child, so
    whatever it changes there reaches no other exercise). A fork costs tens of milliseconds; this keeps a chapter
    to one or two of them."""
    private = [e for e in exercises if e["key"] not in _SHARED]
    shared = [e for e in exercises if e["key"] in _SHARED]
    if not shared:
        return [private] if private else []
    return [private + shared[:1]] + [[e] for e in shared[1:]]


def _timed_out_dependency(ex: dict, outcomes: dict[str, dict], msg: dict) -> str | None:
    """The learner's own function that `ex` seems to call (the request's call_graph: grading.dependencies reads the
    file's syntax) and that timed out while it ran, or None."""
    for other in msg.get("call_graph", {}).get(ex["name"], ()):
        if outcomes.get(other, {}).get("kind") == "timeout" and not outcomes[other].get("at_import"):
            return other
    return None


def grade(msg: dict, source: bytes, root: str) -> tuple[dict, list[bytes], str]:
    """Grade every requested exercise in children forked from this warm state (see _batches).

    Each child starts with torch's global settings reset between exercises (grading.worker.child); if one dies or is
    stopped mid-batch, the exercises it never started go to a fresh child. An import error or a tampered
    channel at import time is the same for every exercise, so it is reported for all of them from the first
    child. An exercise that seems to call one of the learner's own functions that already timed out still runs,
    but with its limit cut to msg["dependent_timeout_s"] (it would most likely wait out a long limit for the same loop);
    if it times out too, its message names that function.
    """
    outcomes: dict[str, dict] = {}
    blob_of: dict[str, bytes] = {}
    output = b""
    short = float(msg.get("dependent_timeout_s", DEPENDENT_TIMEOUT_S))
    for batch in _batches(list(msg["exercises"])):
        pending = [e for e in batch if e["name"] not in outcomes]  # an import failure already answered them
        while pending:
            deps = {e["name"]: dep for e in pending if (dep := _timed_out_dependency(e, outcomes, msg))}
            run = dict(msg, timeouts={n: min(t, short) if n in deps else t
                                      for n, t in msg["timeouts"].items()})
            got, got_blobs, out = grade_once(run, source, pending, root)
            output = output or out
            it = iter(got_blobs)
            for e in pending:
                o = got.get(e["name"])
                if o is None:
                    continue
                if o["kind"] == "result":
                    blob_of[e["name"]] = next(it)
                elif o["kind"] == "timeout" and e["name"] in deps and not o.get("at_import"):
                    dep = deps[e["name"]]
                    o = dict(o, message=o["message"] + _(" It calls your {dep}, which timed out above, so its "
                                                               "limit was cut to {seconds:.0f} s: fix {dep} first, "
                                                               "then grade again.", dep=dep, seconds=short))
                outcomes[e["name"]] = o
            if any(o.get("at_import") for o in got.values()):
                first = next(o for o in got.values() if o.get("at_import"))
                for e in msg["exercises"]:
                    outcomes.setdefault(e["name"], dict(first))
                break
            if pending[0]["name"] not in got:  # the child stopped before its first exercise started
                outcomes[pending[0]["name"]] = {"kind": "died", "message": _("The grading process stopped before "
                                                                             "this exercise started.")}
            pending = [e for e in pending if e["name"] not in outcomes]
    names = [e["name"] for e in msg["exercises"]]
    blobs = [blob_of[n] for n in names if outcomes[n]["kind"] == "result"]
    return {n: outcomes[n] for n in names}, blobs, output.decode("utf-8", "replace")


def main() -> None:
    ctl_in, ctl_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # stray prints go to the judge's log, never into the channel
    _nondumpable()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    import transformers  # noqa: F401  (warm: every child starts with it loaded)
    from transformers import GPT2LMHeadModel, LlamaForCausalLM, Qwen3ForCausalLM  # noqa: F401

    from . import calls, child, guard, inputs  # noqa: F401

    global LAUNCHER
    root = os.environ.get("GRADING_SCRATCH") or tempfile.mkdtemp(prefix="grading-")
    LAUNCHER = children.launcher(root)
    try:
        serve(ctl_in, ctl_out, root)
    finally:
        LAUNCHER.close()


def serve(ctl_in: int, ctl_out: int, root: str) -> None:
    """Answer the judge's requests until it says exit or goes away."""
    LAUNCHER.warm_up()  # spawn: the first spare imports while the judge sends the inputs
    wire.send_json(ctl_out, {"op": "ready", "pid": os.getpid(), "backend": LAUNCHER.name})
    while True:
        try:
            msg, blobs = wire.recv_json(ctl_in)
        except wire.WireError:
            return  # the judge is gone
        op = msg.get("op")
        if op == "inputs":
            unpickler = InputsUnpickler(io.BytesIO(blobs[0]))
            _INPUTS[msg["key"]] = unpickler.load()
            if unpickler.shared:
                _SHARED.add(msg["key"])
            wire.send_json(ctl_out, {"op": "ack"})
        elif op == "grade":
            start = time.perf_counter()
            outcomes, result_blobs, output = grade(msg, blobs[0], root)
            wire.send_json(ctl_out, {"op": "graded", "id": msg["id"], "outcomes": outcomes, "output": output,
                                     "seconds": time.perf_counter() - start}, result_blobs)
        elif op == "exit":
            return
        else:
            wire.send_json(ctl_out, {"op": "error", "message": f"unknown op {op!r}: {json.dumps(msg)[:200]}"})


if __name__ == "__main__":
    main()
