"""The learner's side of grading: a child forked by the warm worker imports the learner's file and
calls their functions.

It runs inside the worker's sandbox, in its own scratch folder, after grading.worker.guard is installed.
It holds the cases' inputs (built and pickled by the judge) and the call protocols
(grading/worker/calls/), never a check or a reference answer. Only the learner's *outputs* leave
it, as torch.save bytes in frames on a pipe the worker reads; the judge loads them with
`weights_only=True` and compares them with its own references. Nothing this process prints,
patches or returns as an object can make a case pass.
"""
from __future__ import annotations

import copy
import faulthandler
import importlib.util
import io
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from . import wire

ALLOWED_SCALARS = (bool, int, float, str, type(None))


class UnsafeOutput(TypeError):
    pass


def plain(value, path="result"):
    """Copy `value` into plain tensors, numbers, strings, tuples, lists and dicts, or raise UnsafeOutput."""
    import torch

    if type(value) in ALLOWED_SCALARS:
        return value
    if isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter):
        t = value.detach().cpu()
        # A tensor that covers its whole storage is sent as is, so tensors that share one storage
        # (tied weights) still share it on the judge side; a view into a larger storage is copied.
        whole = t.untyped_storage().nbytes() == t.numel() * t.element_size() and t.is_contiguous()
        return t if whole else t.clone()
    if isinstance(value, tuple) and type(value).__module__ == "torch.return_types":  # e.g. topk's (values, indices)
        value = tuple(value)
    if type(value) in (tuple, list):
        return type(value)(plain(v, f"{path}[{i}]") for i, v in enumerate(value))
    if type(value) is dict:
        return {plain(k, f"{path} key"): plain(v, f"{path}[{k!r}]") for k, v in value.items()}
    if type(value) is torch.Size:
        return tuple(int(s) for s in value)
    if type(value) is torch.dtype:
        return str(value)
    raise UnsafeOutput(f"{path} is a {type(value).__module__}.{type(value).__qualname__}; "
                       "return tensors, numbers, strings or tuples/lists/dicts of them.")


def learner_traceback(exc: BaseException, learner_file: str) -> str:
    """The traceback restricted to frames in the learner's own file, plus the error line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == learner_file]
    lines = traceback.format_list(frames)
    text = "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))
    return text.strip()


def _run_exercise(module, ex: dict, prepared: list, learner_file: str, protocols: list) -> list[dict]:
    name = ex["name"]
    fn = getattr(module, "QUIZ" if ex["is_quiz"] else name, None)
    results: list[dict] = []
    for case_name, protocol, inputs in zip(ex["cases"], protocols, prepared):
        entry: dict[str, Any] = {"name": case_name}
        if results and results[-1].get("error_type") == "MemoryError":
            results.append({**entry, "error": "skipped: the previous case ran out of memory",
                            "error_type": "MemoryError", "seconds": 0.0})
            continue
        start = time.perf_counter()
        try:
            if fn is None:
                raise NotImplementedError(f"{Path(learner_file).name} has no {name}")
            start = time.perf_counter()  # time the learner's code only
            output = protocol(fn, inputs)
            entry["seconds"] = time.perf_counter() - start
            entry["output"] = plain(output)
        except NotImplementedError:
            entry["not_implemented"] = True
        except UnsafeOutput as exc:
            entry["unsafe"] = str(exc)  # the judge says what it could not read (grading/engine/checker.py)
        except BaseException as exc:  # includes SystemExit and KeyboardInterrupt from learner code
            entry["error"] = learner_traceback(exc, learner_file) or f"{type(exc).__name__}: {exc}"
            entry["error_type"] = type(exc).__name__
        entry.setdefault("seconds", time.perf_counter() - start)
        results.append(entry)
    return results


def run(result_fd: int, learner_file: str, module_name: str, exercises: list[dict], inputs: dict[str, list],
        keep: dict[int, Any], ready: dict[str, list] | None = None) -> None:
    """Import the learner's file, run each exercise and send its results; the caller then exits.

    exercises: [{"name", "is_quiz", "cases": [case names], "protocols": [protocol names]}], in order.
    inputs: exercise name -> one input tuple per case. keep: objects deep copies must share. ready: exercise
    name -> per case, a copy made for this process already (the zygote's watched copies), or None.
    """
    import torch

    from .calls import PROTOCOLS

    faulthandler.enable(all_threads=False)  # a crash prints where the learner's code was (supervisor.crash_line)
    # Looked up before learner code runs, so replacing entries of PROTOCOLS at import time changes nothing.
    protocols = {ex["name"]: [PROTOCOLS[c] for c in ex["protocols"]] for ex in exercises}
    save, write_frame, dumps = torch.save, wire.write_frame, json.dumps
    set_dtype, set_grad = torch.set_default_dtype, torch.set_grad_enabled
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    sys.dont_write_bytecode = True
    try:
        spec = importlib.util.spec_from_file_location(f"learner_{module_name}", learner_file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as exc:  # SyntaxError, SystemExit, anything at import time
        text = learner_traceback(exc, learner_file) or repr(exc)  # the judge words it (engine/scheduler.py)
        body = f"{type(exc).__name__}\n{text}"  # the error's class on the first line: the judge keeps it as data
        write_frame(result_fd, wire.IMPORT_ERROR, body.encode("utf-8", "replace"))
        return
    write_frame(result_fd, wire.IMPORTED)
    for ex in exercises:
        set_dtype(dtype)  # an earlier exercise of this child may have changed them
        set_grad(grad)
        # Each case gets its own deep copy, made before the exercise's clock starts, so code that modifies
        # its arguments in place cannot change the inputs of later cases. The course model and its E are
        # shared by the cases of one exercise (copying 540 MB per case would dominate grading); an exercise that
        # gets them runs last in its process (grading.worker.batches) or, spawned, gets its own copy of them.
        memo = keep.for_exercise() if hasattr(keep, "for_exercise") else keep  # spawn: the exercise's own model
        made = (ready or {}).get(ex["name"]) or [None] * len(inputs[ex["name"]])
        prepared = [copy.deepcopy(shared, memo.copy()) if mine is None else mine
                    for shared, mine in zip(inputs[ex["name"]], made)]
        write_frame(result_fd, wire.STARTED, ex["name"].encode())
        results = _run_exercise(module, ex, prepared, learner_file, protocols[ex["name"]])
        # the timings go in a frame of their own: equal answers then send equal result bytes (the judge reuses its
        # verdict on bytes it has checked already: grading/engine/checker.py, Checker.reply)
        seconds = [r.pop("seconds", 0.0) for r in results]
        buf = io.BytesIO()
        try:
            save(results, buf)
        except BaseException as exc:  # e.g. learner code broke torch.save; the judge reports it
            buf = io.BytesIO()
            save([{"name": r["name"], "unsaved": type(exc).__name__} for r in results], buf)
        write_frame(result_fd, wire.RESULT, buf.getvalue())
        write_frame(result_fd, wire.TIMES, dumps(seconds).encode())
        del prepared, results, buf  # the next exercise of this child gets the whole memory limit
        # (no gc.collect(): a full collection touches every object the warm worker holds, copying its pages)
    write_frame(result_fd, wire.DONE)
