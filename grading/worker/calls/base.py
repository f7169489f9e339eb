"""The default calls (the learner's function on the case's inputs; a quiz's answers sent back as they are) and
what several chapters' calls share (RecordOps)."""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

def call(fn: Callable, inputs: tuple) -> Any:
    """The default protocol: fn(*inputs)."""
    return fn(*inputs)


def quiz(answers: Any, _inputs: tuple) -> Any:
    """The child passes the learner's QUIZ dict in place of a function; it is sent back as is."""
    return answers



class RecordOps(TorchFunctionMode):
    """Records each torch function called, with the shapes of its tensor arguments."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, list[list[int]]]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        shapes = [list(a.shape) for a in args if isinstance(a, torch.Tensor)]
        self.calls.append((getattr(func, "__name__", str(func)), shapes))
        return func(*args, **(kwargs or {}))

def each(fn: Callable, inputs: tuple) -> list[dict]:
    """fn(*args) for every args in inputs[0] (the judge's generated examples), each reported on its own: what it
    returned ("out") or raised ("error"), the input paths it changed in place ("changed") and whether the result
    shares memory with an input ("alias")."""
    from .unchanged import changed_inputs, snapshot

    reports = []
    for args in inputs[0]:
        before = snapshot(args)
        try:
            out = fn(*args)
        except NotImplementedError:
            raise  # an untouched stub: not attempted, as with any other call
        except Exception as e:  # reported with its example; the judge shows the smallest one that fails
            try:
                text = f"{type(e).__name__}: {e}"[:300]
            except Exception:  # an exception whose str() raises too
                text = type(e).__name__
            reports.append({"error": text, "changed": changed_inputs(before)})
            continue
        memory = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor) and a.numel()}
        alias = isinstance(out, torch.Tensor) and (any(out is a for a in args)  # an empty input returned too
                                                   or (out.numel() > 0 and out.untyped_storage().data_ptr() in memory))
        reports.append({"out": out, "changed": changed_inputs(before), "alias": alias})
    return reports


PROTOCOLS = {"call": call, "quiz": quiz, "each": each}
