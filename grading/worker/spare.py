"""A spare learner process for the spawn backend (grading/worker/launchers.py): started ahead of time by the warm
worker, it imports torch (with --model transformers and the course model too), then waits for one batch.

    worker -> spare   stdin: one JSON frame {"msg", "exercises", "scratch", "learner_file", "keep"} + the pickled
                      inputs
    spare -> worker   stdout: READY (it has its job and its inputs), then grading.worker.learner_process's frames
                      stderr: what the learner's code prints

Until READY, whatever importing prints goes to the null device, so it is never the learner's output. A job with
"keep" leaves the spare waiting for the same learner's next job on the same files (launchers.SpawnLauncher),
confined as it is, with torch's defaults and random state put back as they were before any learner code ran;
every other spare exits after its job.
"""
from __future__ import annotations

import io
import os
import sys


def main() -> None:
    result_fd, output_fd, job_fd = os.dup(1), os.dup(2), os.dup(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    try:
        from .housekeeping import nondumpable

        nondumpable()  # the learner code of the child before us must not open our pipes through /proc
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        import torch

        torch.set_num_threads(1)
        import ctypes.util  # noqa: F401  (torch.utils.checkpoint imports torch._dynamo on first use, which imports
        import ctypes.wintypes  # noqa: F401  these two, refused once learner code runs; importing them now costs
        # milliseconds, while importing torch._dynamo itself ahead doubled every spare's start)
        from . import calls, guard, launchers, learner_process, limits, wire  # noqa: F401
        from . import inputs as course_inputs
        from .transport import InputsUnpickler

        if "--model" in sys.argv:  # the worker has graded exercises that use the course model: they come back
            import transformers  # noqa: F401  (a spare without it starts in half the time)
            from transformers import GPT2LMHeadModel, LlamaForCausalLM, Qwen3ForCausalLM  # noqa: F401

            course_inputs.course_model()
            course_inputs.course_embedding()
        pristine = _Pristine(torch)
        tasks, keep = 0, True
        while keep:
            try:
                job, blobs = wire.recv_json(job_fd)
            except wire.WireError:
                return  # the worker closed without a job (it is shutting down, or the student is done)
            keep = bool(job.get("keep"))
            if not keep:
                os.close(job_fd)
            confined = output_fd < 0  # a job ran here before: the same student's, in the same scratch folder
            if confined:
                pristine.restore()
            inputs = InputsUnpickler(io.BytesIO(blobs[0])).load()
            del blobs
            if not confined:
                tasks = limits.count_tasks()
            wire.write_frame(result_fd, wire.READY)
            if not confined:
                os.dup2(output_fd, 1)
                os.dup2(output_fd, 2)
                os.close(output_fd)
                output_fd = -1
            launchers.run_child(job["msg"], job["learner_file"], job["scratch"], result_fd, job["exercises"], inputs,
                                tasks, copies_shared=True, confined=confined, cpu_limit=not keep)
            del inputs
    except BaseException:
        try:
            os.write(2, b"grading child failed:\n")
        except OSError:
            pass
    finally:
        os._exit(0)


class _Pristine:
    """torch's global defaults and the random states as they are before any learner code runs, restored before a
    kept spare's next job, so one chapter's settings never decide another's grade."""

    def __init__(self, torch):
        import random

        self.torch, self.random = torch, random
        self.dtype, self.grad = torch.get_default_dtype(), torch.is_grad_enabled()
        self.rng, self.py_rng = torch.get_rng_state(), random.getstate()

    def restore(self) -> None:
        torch = self.torch
        torch.set_default_dtype(self.dtype)
        torch.set_grad_enabled(self.grad)
        torch.set_num_threads(1)
        torch.set_rng_state(self.rng)
        self.random.setstate(self.py_rng)


if __name__ == "__main__":
    main()
