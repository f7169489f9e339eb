"""The course model and its E in read-only memory (the fork backend's zygote, Linux).

Per-case copies share the course model and E instead of copying them (grading/worker/transport.py), so the
zygote cannot watch them as it watches other inputs (grading/worker/watched.py). Instead it moves their storages
into one sealed memfd, mapped read-only, before it forks a learner process that gets them: a write into them is
a memory fault that ends that process, which the worker reads as SIGSEGV in its exit status (from outside), and
no process can make the mapping writable again (mprotect and /proc/self/mem are refused for a sealed file).
"""
from __future__ import annotations

import mmap
import os
import warnings

import torch

try:
    import fcntl
except ImportError:  # Windows: no zygote, nothing sealed
    fcntl = None

from . import inputs as course_inputs
from .watched import layout

_sealed: set[int] = set()  # data_ptr() of every storage already moved (its tensors keep it)


def available() -> bool:
    """Whether this system has sealable memfds (Linux)."""
    return hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")  # hasattr(None, ...) is False


def _write_all(fd: int, storage: torch.UntypedStorage, offset: int) -> None:
    view = memoryview(torch.empty(0, dtype=torch.uint8).set_(storage).numpy()).cast("B")
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def seal(tensors: list[torch.Tensor]) -> int:
    """Move the storages of `tensors` (those not moved yet) into one read-only sealed mapping, keeping every tensor's
    offset, shape, strides and the sharing between them; the bytes moved."""
    where, size = layout([t.untyped_storage() for t in tensors if t.untyped_storage().data_ptr() not in _sealed])
    if not size:
        return 0
    fd = os.memfd_create("course-fixtures", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, size)
        for offset, storage in where.values():
            _write_all(fd, storage, offset)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        mapping = mmap.mmap(fd, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    moved: dict[int, torch.UntypedStorage] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "the given buffer is not writable": that is the point
        for key, (offset, storage) in where.items():
            moved[key] = torch.frombuffer(mapping, dtype=torch.uint8, count=storage.nbytes(),
                                          offset=offset).untyped_storage()
    with torch.no_grad():
        for t in tensors:
            new = moved.get(t.untyped_storage().data_ptr())
            if new is not None:
                t.set_(new, t.storage_offset(), t.shape, t.stride())
    _sealed.update(s.data_ptr() for s in moved.values())
    return size


def seal_course_fixtures() -> int:
    """Seal the course model's parameters and buffers and E, those this process has loaded; the bytes moved."""
    tensors: list[torch.Tensor] = []
    if course_inputs.course_model_loaded():
        model = course_inputs.course_model()[0]
        tensors += [*model.parameters(), *model.buffers()]
    if course_inputs.course_embedding_loaded():
        tensors.append(course_inputs.course_embedding())
    return seal(tensors) if available() else 0
