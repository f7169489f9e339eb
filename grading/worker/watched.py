"""Inputs watched from outside the learner's process (the fork backend's zygote).

A case whose call reports the inputs it changed in place ("<call>+unchanged", "each") gets its copy of the inputs
from the zygote, made before the learner process is forked: every tensor's storage in an anonymous shared mapping
that the learner process inherits. Once that process has ended, the zygote compares each copy with its own
original, bit for bit. So a change the learner's process leaves out of its own report (learner code can rewrite
anything in its process, or write the report itself) is still seen, by a process learner code never ran in.

What only the learner's process can see stays its word: a tensor's shape or dtype changed in place (resize_,
set_). The course model and E, which per-case copies share instead of copying (grading/worker/transport.py), are
not watched but read-only (grading/worker/readonly.py): a write into them ends the process.
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


def layout(storages: list[torch.UntypedStorage]) -> tuple[dict[int, tuple[int, torch.UntypedStorage]], int]:
    """Each distinct non-empty storage placed in one mapping, 64-byte aligned: ({data_ptr(): (offset, storage)},
    the mapping's size)."""
    where: dict[int, tuple[int, torch.UntypedStorage]] = {}
    size = 0
    for storage in storages:
        if storage.nbytes() and storage.data_ptr() not in where:
            where[storage.data_ptr()] = (size, storage)
            size += -(-storage.nbytes() // 64) * 64
    return where, size


def as_bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    """The storage's bytes as a uint8 tensor on it (no copy)."""
    return torch.empty(0, dtype=torch.uint8).set_(storage)


def _shared_storages(storages: list[torch.UntypedStorage]) -> dict[int, torch.UntypedStorage]:
    """data_ptr() -> a copy of each distinct non-empty storage, all in one anonymous shared mapping, each a storage of
    its own there (two inputs never look like one storage to learner code)."""
    where, size = layout(storages)
    if not size:
        return {}
    mapping = mmap.mmap(-1, size)
    copied: dict[int, torch.UntypedStorage] = {}
    for key, (offset, storage) in where.items():
        region = torch.frombuffer(mapping, dtype=torch.uint8, count=storage.nbytes(), offset=offset)
        region.copy_(as_bytes(storage))
        copied[key] = region.untyped_storage()
    return copied


def _share(tensors: list[torch.Tensor]) -> None:
    """Move the storages of `tensors` into an anonymous shared mapping (tensors on one storage keep sharing it),
    keeping every tensor's offset, shape and strides."""
    moved = _shared_storages([t.untyped_storage() for t in tensors])
    for t in tensors:
        if t.untyped_storage().nbytes():
            with torch.no_grad():
                t.set_(moved[t.untyped_storage().data_ptr()], t.storage_offset(), t.shape, t.stride())


def _plain(t: torch.Tensor) -> bool:
    """A tensor `_copies_in_shared_memory` can copy as deepcopy would: a plain (or Parameter) CPU leaf with no grad
    and nothing of its own in its __dict__."""
    return (type(t) in (torch.Tensor, torch.nn.Parameter) and t.layout == torch.strided and t.device.type == "cpu"
            and t.is_leaf and t.grad is None and not t.__dict__ and not t.is_conj() and not t.is_neg()
            and t.untyped_storage().nbytes() > 0)


def _copies_in_shared_memory(tensors: list[torch.Tensor]) -> dict[int, torch.Tensor]:
    """id(tensor) -> its copy on a storage of `_shared_storages` (tensors that shared a storage share its copy), for
    a deepcopy memo: one copy of the bytes, made where the learner process will find them, instead of a deepcopy's
    clone and a second copy into the mapping."""
    copied = _shared_storages([t.untyped_storage() for t in tensors])
    out: dict[int, torch.Tensor] = {}
    for t in tensors:
        b = torch.empty(0, dtype=t.dtype).set_(copied[t.untyped_storage().data_ptr()], t.storage_offset(), t.shape,
                                               t.stride())
        if type(t) is torch.nn.Parameter:
            b = torch.nn.Parameter(b, requires_grad=t.requires_grad)
        elif t.requires_grad:
            b.requires_grad_(True)
        out[id(t)] = b
    return out


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
        kept = {id(t) for _, t in tensors_in(tuple(keep.values()))}  # the course model's tensors, E
        for ex in exercises:
            name, row = ex["name"], []
            for i, (protocol, original) in enumerate(zip(ex["protocols"], inputs[name])):
                if not watched(protocol):
                    row.append(None)
                    continue
                found = tensors_in(original)
                made = _copies_in_shared_memory([t for _, t in found if id(t) not in kept and _plain(t)])
                dup = copy.deepcopy(original, {**keep, **made})
                pairs = [(path, a, b) for (path, a), (_, b) in zip(found, tensors_in(dup))
                         if a is not b and b.layout == torch.strided and b.device.type == "cpu"]
                _share([b for path, a, b in pairs if made.get(id(a)) is not b])  # what deepcopy copied itself
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
