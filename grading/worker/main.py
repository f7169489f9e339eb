"""The warm grading worker: torch (and, once inputs need them, transformers and the course model) loaded once;
a learner process per batch of exercises to run the learner's code.

Started by the judge (grading/engine/worker_pool.py) as `python -m grading.worker.main --backend fork|spawn`
(the judge decides the backend, grading/engine/sandbox.py: backend), inside bubblewrap where it runs
(grading/engine/sandbox.py mounts grading/worker/ and nothing else of grading/). It talks to the judge over its
stdin/stdout with grading.worker.wire frames:

    judge -> worker  {"op": "inputs", "key": K} + pickled inputs   (built by the judge; cached here)
                     {"op": "grade", "id", "filename", "module", "exercises": [{"name", "is_quiz", "key", "cases",
                      "protocols"}], "call_graph", "timeouts": {name: s}, "import_timeout_s", "setup_timeout_s",
                      "dependent_timeout_s", "memory_mb", "blocked": [...]} + the learner's source
                     {"op": "exit"}
    worker -> judge  {"op": "ready"}, {"op": "ack"}, {"op": "graded", "id", "outcomes"}
                      + one blob per outcome of kind "result" (torch.save bytes, never unpickled here)

The worker never loads a check module. It marks itself non-dumpable so a learner process cannot open its pipes
through /proc, and each learner process closes every descriptor but its own two pipes before learner code runs.
With the fork backend, learner processes fork from a zygote that the worker forks before its first request
(grading/worker/zygote.py), so none inherits the memory that held an earlier learner's code; the inputs live there.
A request that begins must arrive whole within REQUEST_TIMEOUT_S, or the worker ends (Deadline).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import threading

from . import batches, housekeeping, launchers, wire
from .limits import REQUEST_TIMEOUT_S
from .transport import InputsUnpickler, warm_transformers


class Worker:
    """The worker's state: its launcher and the inputs the judge sent (key -> exercise name -> inputs per case)."""

    def __init__(self, launcher, root: str):
        self.launcher, self.root = launcher, root
        self.inputs: dict[str, dict[str, list]] = {}
        self.shared: set[str] = set()  # keys whose inputs hold the worker's own course model or E (not copies)

    def serve(self, ctl_in: int, ctl_out: int) -> None:
        """Answer the judge's requests until it says exit or goes away."""
        self.launcher.warm_up()  # spawn: the first spare imports while the judge sends the inputs
        wire.send_json(ctl_out, {"op": "ready"})
        while True:
            clock = Deadline(REQUEST_TIMEOUT_S)
            try:
                msg, blobs = wire.recv_json(ctl_in, clock.start)
            except wire.WireError:
                return  # the judge is gone
            finally:
                clock.stop()
            op = msg.get("op")
            if op == "inputs":
                kept = getattr(self.launcher, "load_inputs", lambda *a: None)(msg["key"], blobs[0])
                if kept is not None:  # fork on Linux: the zygote keeps them (grading/worker/zygote.py)
                    self.inputs[msg["key"]], shared = kept
                else:
                    unpickler = InputsUnpickler(io.BytesIO(blobs[0]))
                    self.inputs[msg["key"]], shared = unpickler.load(), unpickler.shared
                    warm_transformers()
                if shared:
                    self.shared.add(msg["key"])
                wire.send_json(ctl_out, {"op": "ack"})
            elif op == "grade":
                inputs = {e["name"]: self.inputs[e["key"]][e["name"]] for e in msg["exercises"]}
                shared = {e["key"] for e in msg["exercises"] if e["key"] in self.shared}
                outcomes, result_blobs = batches.grade(self.launcher, msg, blobs[0], inputs, shared, self.root)
                wire.send_json(ctl_out, {"op": "graded", "id": msg["id"], "outcomes": outcomes}, result_blobs)
            elif op == "exit":
                return
            else:
                wire.send_json(ctl_out, {"op": "error", "message": f"unknown op {op!r}: {json.dumps(msg)[:200]}"})


class Deadline:
    """Ends the worker if a request that has begun is not whole within `seconds`: something else read part of it
    (the judge's pipe opened from outside), and a stream read from the middle cannot be trusted again. The judge
    sees the worker end at once and says so for that request, instead of waiting minutes for its answer."""

    def __init__(self, seconds: float):
        self.timer = threading.Timer(seconds, self.expire)
        self.timer.daemon = True

    def start(self) -> None:
        self.timer.start()

    def stop(self) -> None:
        self.timer.cancel()

    @staticmethod
    def expire() -> None:
        os.write(2, f"grading worker: a request from the judge did not arrive whole within {REQUEST_TIMEOUT_S:.0f} s "
                    "(its pipe read by another process?); ending this worker.\n".encode())
        os._exit(3)


def safe_path() -> None:
    """No writable shared folder on sys.path: not the folder the worker started in (sys.path[0] of `python -m`), the
    temporary folder or the scratch root, where a learner process could leave a module for the next one to import.
    Spares (spawn backend) inherit PYTHONSAFEPATH, so their sys.path[0] is never their folder either."""
    os.environ["PYTHONSAFEPATH"] = "1"
    shared = {os.path.realpath(p) for p in (os.getcwd(), tempfile.gettempdir(), os.environ.get("GRADING_SCRATCH") or "")
              if p}
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) not in shared]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m grading.worker.main")
    p.add_argument("--backend", choices=["fork", "spawn"], required=True, help="decided by the judge")
    args = p.parse_args(argv)
    safe_path()
    ctl_in, ctl_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # stray prints go to the judge's log, never into the channel
    housekeeping.nondumpable()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    import torch._dynamo  # noqa: F401  (as in spare.py: torch.utils.checkpoint imports it, and so ctypes, on first use)
    from . import calls, guard, inputs, learner_process  # noqa: F401  (warm: every learner process starts with them)

    root = os.environ.get("GRADING_SCRATCH") or tempfile.mkdtemp(prefix="grading-")
    launcher = launchers.launcher(args.backend, root)
    try:
        Worker(launcher, root).serve(ctl_in, ctl_out)
    finally:
        launcher.close()


if __name__ == "__main__":
    main()
