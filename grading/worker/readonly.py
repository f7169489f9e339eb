"""The course model and its E in read-only memory (the fork backend's zygote, Linux).

Per-case copies share the course model and E instead of copying them (grading/worker/transport.py), so the
zygote cannot watch them as it watches other inputs (grading/worker/watched.py). Instead it puts their storages in
read-only shared mappings before it forks a learner process that gets them: a write into them is a memory fault
that ends that process, which the worker reads as SIGSEGV in its exit status (from outside). Where a storage is
still the bytes of the file it was loaded from (the course model's safetensors cache, mapped privately), the file
is mapped again, read-only and shared, from a descriptor opened for reading (no copy: the page cache stays shared
with every worker); anything else is copied into one memfd sealed against writes. Either way no process can make
the mapping writable again: mprotect and /proc/self/mem are refused by the kernel.
"""
from __future__ import annotations

import functools
import mmap
import os
import warnings

import torch

try:
    import fcntl
except ImportError:  # Windows: no zygote, nothing sealed
    fcntl = None

from . import inputs as course_inputs
from .watched import as_bytes, layout

_sealed: set[int] = set()  # data_ptr() of every storage already moved (its tensors keep it)


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether this system makes sealable memfds (Linux 3.17 and later; asked once)."""
    if not (hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS")):  # hasattr(None, ...) is False
        return False
    try:
        os.close(os.memfd_create("probe", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC))
    except OSError:
        return False
    return True


def _write_all(fd: int, storage: torch.UntypedStorage, offset: int) -> None:
    view = memoryview(as_bytes(storage).numpy()).cast("B")
    while view:
        done = os.pwrite(fd, view, offset)
        view, offset = view[done:], offset + done


def _file_mappings() -> list[tuple[int, int, int, str]]:
    """(start, end, offset in the file, path) of this process's mappings of files that still exist."""
    found = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.rstrip("\n").split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/") and not parts[5].endswith("(deleted)"):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                found.append((start, end, int(parts[2], 16), parts[5]))
    return found


def _from_files(where: dict[int, tuple[int, torch.UntypedStorage]]) -> dict[int, torch.UntypedStorage]:
    """data_ptr() -> the same bytes in a read-only shared mapping of the file, for each storage of `where` that lies
    in a mapping of a file and still holds that file's bytes (compared)."""
    maps, files, found = _file_mappings(), {}, {}
    for key, (_, storage) in where.items():
        n = storage.nbytes()
        hit = next(((path, offset + key - start) for start, end, offset, path in maps if start <= key < key + n <= end),
                   None)
        if hit is None:
            continue
        path, offset = hit
        if path not in files:
            try:
                with open(path, "rb") as f:
                    files[path] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # MAP_SHARED, PROT_READ
            except (OSError, ValueError):
                files[path] = None
        if files[path] is not None and offset + n <= len(files[path]):
            same = torch.frombuffer(files[path], dtype=torch.uint8, count=n, offset=offset)
            if torch.equal(same, as_bytes(storage)):
                found[key] = same.untyped_storage()
    return found


def _into_memfd(where: dict[int, tuple[int, torch.UntypedStorage]], size: int) -> dict[int, torch.UntypedStorage]:
    """data_ptr() -> a copy of each storage of `where` (at its offset) in one memfd, sealed and mapped read-only."""
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
    return {key: torch.frombuffer(mapping, dtype=torch.uint8, count=storage.nbytes(), offset=offset).untyped_storage()
            for key, (offset, storage) in where.items()}


def seal(tensors: list[torch.Tensor]) -> int:
    """Put the storages of `tensors` (those not done yet) in read-only shared mappings, keeping every tensor's
    offset, shape, strides and the sharing between them; the bytes that moved (mapped from a file or copied)."""
    where, size = layout([t.untyped_storage() for t in tensors if t.untyped_storage().data_ptr() not in _sealed])
    if not size:
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "the given buffer is not writable": that is the point
        moved = _from_files(where)
        rest, rest_size = layout([s for key, (_, s) in where.items() if key not in moved])
        if rest_size:
            moved.update(_into_memfd(rest, rest_size))
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
