"""Length-prefixed frames on pipes: how the judge, the warm worker and each learner child talk.

A frame is a 1-byte kind, an 8-byte big-endian length and the body. Readers cap the length they
accept, so a peer cannot make them allocate without end.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Callable

HEADER = struct.Struct(">BQ")
# kinds
JSON, BLOB = 1, 2  # judge <-> worker: a JSON header, optionally followed by one binary body
IMPORTED, IMPORT_ERROR, STARTED, RESULT, DONE = 11, 12, 13, 14, 15  # child -> worker
READY = 16  # spare -> worker (spawn backend): it has its job; the learner's import starts now
TIMES = 17  # child -> worker, right after a RESULT: its cases' seconds (JSON), kept out of the result itself


class WireError(RuntimeError):
    """The peer closed the pipe, or sent a frame that breaks the protocol."""


def write_frame(fd: int, kind: int, body: bytes = b"") -> None:
    """Write one whole frame to a blocking fd."""
    data = HEADER.pack(kind, len(body)) + body
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WireError("the other side closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, max_len: int = 1 << 34) -> tuple[int, bytes]:
    """Read one whole frame from a blocking fd."""
    kind, length = HEADER.unpack(_read_exact(fd, HEADER.size))
    if length > max_len:
        raise WireError(f"a frame of {length} bytes is over the limit of {max_len}")
    return kind, _read_exact(fd, length)


def send_json(fd: int, message: dict, blobs: list[bytes] | tuple = ()) -> None:
    """A JSON frame, then one BLOB frame per blob (the header says how many)."""
    message = dict(message, n_blobs=len(blobs))
    write_frame(fd, JSON, json.dumps(message).encode())
    for blob in blobs:
        write_frame(fd, BLOB, blob)


def recv_json(fd: int, on_first_byte: Callable[[], None] | None = None) -> tuple[dict, list[bytes]]:
    """The counterpart of send_json: (message, blobs). on_first_byte: called once the message has begun (the
    worker starts its clock there: a message that begins must end within seconds)."""
    if on_first_byte is None:
        kind, body = read_frame(fd)
    else:
        first = _read_exact(fd, 1)
        on_first_byte()
        kind, length = HEADER.unpack(first + _read_exact(fd, HEADER.size - 1))
        body = _read_exact(fd, length)
    if kind != JSON:
        raise WireError(f"expected a JSON frame, got kind {kind}")
    message = json.loads(body)
    blobs = []
    for _ in range(int(message.get("n_blobs", 0))):
        kind, blob = read_frame(fd)
        if kind != BLOB:
            raise WireError(f"expected a BLOB frame, got kind {kind}")
        blobs.append(blob)
    return message, blobs


class FrameParser:
    """Incremental parser for a non-blocking reader: feed bytes, take whole frames."""

    def __init__(self, max_len: int):
        self.buf = bytearray()
        self.max_len = max_len

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self.buf += data
        frames = []
        while len(self.buf) >= HEADER.size:
            kind, length = HEADER.unpack_from(self.buf)
            if length > self.max_len:
                raise WireError(f"a frame of {length} bytes is over the limit of {self.max_len}")
            if len(self.buf) < HEADER.size + length:
                break
            frames.append((kind, bytes(self.buf[HEADER.size:HEADER.size + length])))
            del self.buf[:HEADER.size + length]
        return frames
