"""Inputs watched from outside the learner's process (the fork backend's zygote).

A case whose call reports the inputs it changed in place ("<call>+unchanged", "each") gets its copy of the inputs
from the zygote, made before the learner process is forked: every tensor's storage in an anonymous shared mapping
that the learner process inherits. Once that process has ended, the zygote compares each copy with its own
original, bit for bit. So a change the learner's process leaves out of its own report (learner code can rewrite
anything in its process, or write the report itself) is still seen, by a process learner code never ran in.

What only the learner's process can see stays its word: a tensor's shape or dtype changed in place (resize_,
set_), and the course model and E, which per-case copies share instead of copying (grading/worker/transport.py).
"""
from __future__ import annotations

import copy
import mmap
import re
from typing import Any

import torch

from .calls.unchanged import UNCHANGED, tensors_in

_SAME_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
EACH_PATH = re.compile(r"#0\[(\d+)\]\[(\d+)\](.*)")  # "each": example k's argument j -> ("k", "#j...")


def watched(protocol: str) -> bool:
    """Whether a case with this call reports the inputs it changed (and so gets a watched copy)."""
    return protocol.endswith(UNCHANGED) or protocol == "each"


def _share(tensors: list[torch.Tensor]) -> None:
    """Move the storages of `tensors` into anonymous shared mappings (one per storage, tensors on one storage
    keep sharing it), keeping every tensor's offset, shape and strides."""
    moved: dict[int, torch.UntypedStorage] = {}
    for t in tensors:
        storage = t.untyped_storage()
        if storage.nbytes() == 0:
            continue
        key = storage.data_ptr()
        if key not in moved:
            buf = torch.frombuffer(mmap.mmap(-1, storage.nbytes()), dtype=torch.uint8)
            buf.copy_(torch.empty(0, dtype=torch.uint8).set_(storage))
            moved[key] = buf.untyped_storage()
        with torch.no_grad():
            t.set_(moved[key], t.storage_offset(), t.shape, t.stride())


def _bits(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        t = torch.view_as_real(t)
    if t.dtype == torch.bool:
        return t.view(torch.uint8)
    return t.view(_SAME_WIDTH[t.element_size()])


def _same(original: torch.Tensor, copied: torch.Tensor) -> bool:
    """Whether the copy still holds the original's values, bit for bit (NaN payloads and -0.0 included)."""
    try:
        return torch.equal(_bits(original.detach()), _bits(copied.detach()))
    except (KeyError, RuntimeError):  # an element size with no integer of that width
        return torch.equal(original.detach(), copied.detach())


class Watch:
    """One learner process's watched copies: made by `__init__` in the zygote before the fork, read by `changed`
    after the process has ended."""

    def __init__(self, inputs: dict[str, list], exercises: list[dict], keep: dict[int, Any]):
        """inputs: exercise name -> each case's inputs (the zygote's originals); exercises: the job's, with their
        cases' protocols; keep: objects the copies share instead of copying (the course model and E)."""
        self.ready: dict[str, list] = {}  # exercise -> per case: the watched copy the learner gets, or None
        self.pairs: dict[str, dict[int, list]] = {}  # exercise -> case -> [(path, original, copy)]
        for ex in exercises:
            name, row = ex["name"], []
            for i, (protocol, original) in enumerate(zip(ex["protocols"], inputs[name])):
                if not watched(protocol):
                    row.append(None)
                    continue
                dup = copy.deepcopy(original, dict(keep))
                pairs = [(path, a, b) for (path, a), (_, b) in zip(tensors_in(original), tensors_in(dup))
                         if a is not b and b.layout == torch.strided and b.device.type == "cpu"]
                _share([b for _, _, b in pairs])
                self.pairs.setdefault(name, {})[i] = pairs
                row.append(dup)
            self.ready[name] = row

    def changed(self) -> dict[str, dict[str, list[str]]]:
        """exercise -> case index (as text) -> the paths of the inputs whose values changed since the copy."""
        return {name: {str(i): [path for path, a, b in pairs if not _same(a, b)] for i, pairs in cases.items()}
                for name, cases in self.pairs.items()}


class Unwatched:
    """A learner process whose inputs could not be watched (making the copies failed): it gets its own copies, and
    asking what it changed says why nothing is known, so the judge grades none of its watched cases."""

    def __init__(self, why: str):
        self.ready: dict[str, list] = {}
        self.why = why

    def changed(self) -> dict:
        raise RuntimeError(f"its inputs were not watched: {self.why}")
