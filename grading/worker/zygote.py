"""The zygote (fork backend): forked from the warm worker before any request, so it has never held a submission;
it keeps the cases' inputs and forks every learner process, which reads its learner's file only after the fork.
A learner process therefore inherits no earlier learner's code, quiz answers or results, whatever memory it reads.

    worker -> zygote  {"op": "inputs", "key"} + the pickled inputs        -> {"names": [...], "shared": bool}
                      {"op": "fork", "job": {...}} + two pipe ends (SCM_RIGHTS) -> {"pid": learner pid}
                      {"op": "observe", "pid"}, once that process has ended  -> {"changed": {...}}

The zygote also watches the inputs of the cases that must leave them unchanged (grading/worker/watched.py): it
makes their copies in shared memory before the fork and compares them with its own originals once the learner
process has ended ("observe"), so that observation is not the learner process's word. The course model and E,
which those copies share, it keeps in read-only memory instead (grading/worker/readonly.py).

Each learner process is forked through a short-lived middle process, so it is re-parented to the worker (a child
subreaper): the worker waits for it and reads its exit status as for any child (launchers.ForkedChild).
"""
from __future__ import annotations

import gc
import io
import json
import os
import socket
from typing import Callable, NoReturn

from . import wire


class Zygote:
    """The worker's handle on its zygote."""

    def __init__(self, run_child):
        """run_child: launchers.run_child, what each learner process runs (passed in: this module imports no
        launcher)."""
        set_child_subreaper()
        ours, theirs = socket.socketpair()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                ours.close()
                os.closerange(3, theirs.fileno())  # the judge's pipes among them
                os.closerange(theirs.fileno() + 1, 65536)
                serve(theirs, run_child)
            finally:
                os._exit(0)
        theirs.close()
        self.sock = ours

    def _call(self, message: dict, blob: bytes = b"", fds: list[int] = ()) -> dict:
        body = json.dumps(message).encode()
        data = wire.HEADER.pack(wire.JSON, len(body)) + body + wire.HEADER.pack(wire.BLOB, len(blob)) + blob
        socket.send_fds(self.sock, [data[:1]], list(fds))
        self.sock.sendall(data[1:])
        reply, _ = wire.recv_json(self.sock.fileno())
        if "error" in reply:
            raise RuntimeError(f"the zygote failed: {reply['error']}")
        return reply

    def inputs(self, key: str, blob: bytes) -> tuple[list[str], bool]:
        """Send a request's inputs to the zygote; (their exercise names, whether they hold the course model or E)."""
        reply = self._call({"op": "inputs", "key": key}, blob)
        return reply["names"], reply["shared"]

    def fork(self, job: dict, result_w: int, output_w: int) -> int:
        """A learner process for `job` (launchers.run_child's arguments), writing to the two pipe ends; its pid."""
        return self._call({"op": "fork", "job": job}, b"", [result_w, output_w])["pid"]

    def observe(self, pid: int) -> dict:
        """What the learner process `pid` (ended) changed in its watched inputs: exercise -> case -> paths."""
        return self._call({"op": "observe", "pid": pid})["changed"]

    def close(self) -> None:
        self.sock.close()
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def set_child_subreaper() -> None:
    """PR_SET_CHILD_SUBREAPER: orphaned descendants (each learner process, once its middle process ends) become
    this process's children."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_CHILD_SUBREAPER failed")


def _receive(sock: socket.socket) -> tuple[dict, bytes, list[int]]:
    first, fds, _flags, _addr = socket.recv_fds(sock, 1, 2)
    if not first:
        raise wire.WireError("the worker is gone")
    fd = sock.fileno()
    _kind, length = wire.HEADER.unpack(first + wire._read_exact(fd, wire.HEADER.size - 1))
    message = json.loads(wire._read_exact(fd, length))
    _kind, blob = wire.read_frame(fd)
    return message, blob, list(fds)


def serve(sock: socket.socket, run_child) -> None:
    """The zygote's loop: keep inputs, fork learner processes, until the worker goes away."""
    from .readonly import seal_course_fixtures
    from .transport import InputsUnpickler, shared_objects, warm_transformers
    from .watched import Unwatched, Watch

    inputs: dict[str, dict[str, list]] = {}
    watches: dict[int, Watch | Unwatched] = {}  # learner pid -> its watched inputs, until the worker asks what changed
    fd = sock.fileno()
    while True:
        try:
            message, blob, fds = _receive(sock)
        except (wire.WireError, OSError):
            return
        try:
            if message["op"] == "inputs":
                unpickler = InputsUnpickler(io.BytesIO(blob))
                loaded = unpickler.load()
                if unpickler.shared and seal_course_fixtures():  # just loaded: read again, its views on the sealed
                    loaded = InputsUnpickler(io.BytesIO(blob)).load()
                inputs[message["key"]] = loaded
                warm_transformers()
                wire.send_json(fd, {"names": list(inputs[message["key"]]), "shared": bool(unpickler.shared)})
            elif message["op"] == "observe":
                watch = watches.pop(message["pid"], None)
                if watch is None:
                    raise KeyError(f"no watched inputs for process {message['pid']}")
                wire.send_json(fd, {"changed": watch.changed()})
            else:
                job = message["job"]
                mine = {e["name"]: inputs[e["key"]][e["name"]] for e in job["exercises"]}
                try:
                    watch = Watch(mine, job["exercises"], shared_objects())
                except Exception as exc:  # graded anyway; the judge grades none of its watched cases
                    watch = Unwatched(f"{type(exc).__name__}: {exc}")
                pid = _fork_learner(job, mine, watch.ready, fds[0], fds[1], run_child)
                while len(watches) >= 8:  # never asked about (the worker failed between): forget the oldest
                    watches.pop(next(iter(watches)))
                watches[pid] = watch
                wire.send_json(fd, {"pid": pid})
        except Exception as exc:  # a bug here, never learner code (none runs in the zygote)
            wire.send_json(fd, {"error": f"{type(exc).__name__}: {exc}"})
        finally:
            for f in fds:
                os.close(f)


def become_learner(result_w: int, output_w: int, run: Callable[[], None]) -> NoReturn:
    """In a freshly forked learner process (from the zygote, or from the worker without one): its own session,
    stdin from /dev/null, stdout and stderr to `output_w`, no descriptor left but the two pipes; then run(), then
    exit. Never returns."""
    try:
        gc.freeze()  # its collections never walk (so never copy the pages of) the objects inherited from the fork
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        os.closerange(3, result_w)  # the worker's and the zygote's descriptors: only the two pipes are left
        os.closerange(result_w + 1, 65536)
        run()
    except BaseException:
        try:
            os.write(2, b"grading child failed:\n")
        except OSError:
            pass
    finally:
        os._exit(0)


def _fork_learner(job: dict, inputs: dict, ready: dict, result_w: int, output_w: int, run_child) -> int:
    """Fork a middle process that forks the learner process and ends at once; the learner's pid."""
    pid_r, pid_w = os.pipe()
    middle = os.fork()
    if middle == 0:
        try:
            os.close(pid_r)
            learner = os.fork()
            if learner == 0:
                become_learner(result_w, output_w, lambda: run_child(
                    job["msg"], job["learner_file"], job["scratch"], result_w, job["exercises"], inputs, job["tasks"],
                    ready=ready))
            os.write(pid_w, str(learner).encode())
        finally:
            os._exit(0)
    os.close(pid_w)
    with os.fdopen(pid_r, "rb") as f:
        learner = int(f.read() or b"0")
    os.waitpid(middle, 0)  # once it is reaped the learner process is the worker's child
    if not learner:
        raise RuntimeError("the middle process could not fork")
    return learner
