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
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile

from . import batches, housekeeping, launchers, wire
from .transport import InputsUnpickler


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
            try:
                msg, blobs = wire.recv_json(ctl_in)
            except wire.WireError:
                return  # the judge is gone
            op = msg.get("op")
            if op == "inputs":
                unpickler = InputsUnpickler(io.BytesIO(blobs[0]))
                self.inputs[msg["key"]] = unpickler.load()
                if unpickler.shared:
                    self.shared.add(msg["key"])
                warm_transformers()
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


def warm_transformers() -> None:
    """Once inputs have brought transformers in (the course model, a model built by the judge), its model classes
    too, so every learner process starts with them loaded. Inputs of plain tensors never pay for it."""
    if "transformers" in sys.modules:
        from transformers import GPT2LMHeadModel, LlamaForCausalLM, Qwen3ForCausalLM  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m grading.worker.main")
    p.add_argument("--backend", choices=["fork", "spawn"], required=True, help="decided by the judge")
    args = p.parse_args(argv)
    ctl_in, ctl_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # stray prints go to the judge's log, never into the channel
    housekeeping.nondumpable()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from . import calls, guard, inputs, learner_process  # noqa: F401  (warm: every learner process starts with them)

    root = os.environ.get("GRADING_SCRATCH") or tempfile.mkdtemp(prefix="grading-")
    launcher = launchers.launcher(args.backend, root)
    try:
        Worker(launcher, root).serve(ctl_in, ctl_out)
    finally:
        launcher.close()


if __name__ == "__main__":
    main()
