"""The judge's handles on warm grading workers (grading/worker/main.py): start one in the sandbox, send it inputs
and learner files, get back outcomes; and this process's registry of warm workers (warm_worker). One mechanism
serves `judge.py` (a class on --workers workers) and the notebook's `check()` (one worker kept warm for the
session). A Dask cluster runs this same pool on each of its machines (grading/engine/cluster.py).
"""
from __future__ import annotations

import atexit
import os
import queue
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from ..i18n import _, verbatim
from ..worker import wire
from . import sandbox

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 180.0  # importing torch + transformers in a fresh worker on a busy machine
INPUTS_TIMEOUT_S = 240.0  # receiving inputs (the worker may load, and on first use verify, the course model)


class WorkerFailed(RuntimeError):
    """A worker could not start, or stopped answering; the message carries the end of its log."""


# What the worker (and so the learner's code) gets of the judge's environment: what Python, torch and the system
# libraries need to run, nothing of the teacher's (tokens, keys, paths of other projects). Windows needs SYSTEMROOT.
ENV_KEEP = ("PATH", "SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "TMPDIR", "LANG", "LC_ALL",
            "LC_CTYPE", "TZ", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER",
            "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")


def _kept_environment(environ: "os._Environ | dict[str, str]") -> dict[str, str]:
    return {k: v for k, v in environ.items() if k.upper() in ENV_KEEP}


def _worker_env(isolation: sandbox.Isolation) -> dict[str, str]:
    from lesson_utils.course_model import cache_root

    env = {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1",
           # no working folder (/tmp, the scratch root) on sys.path: a module planted there would run in every later
           # worker and spare before its guard
           "PYTHONSAFEPATH": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "LLM_COURSE_CACHE": str(cache_root().resolve()), "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
           # torch's CPU allocator asks Linux for huge pages for buffers of 2 MB and more: the zygote's page tables
           # shrink, so each learner process forks (and exits) faster
           "THP_MEM_ALLOC_ENABLE": "1"}
    if isolation.is_os_level:
        env.update(PATH="/usr/bin:/bin", HOME="/tmp", HF_HOME="/tmp/.hf", MPLCONFIGDIR="/tmp/.mpl",
                   GRADING_IN_BWRAP="1", GRADING_SCRATCH="/tmp")
    return env


_workers_lock = threading.Lock()
_spawn_requests: "queue.Queue[tuple[list[str], dict, Future]]" = queue.Queue()
_spawner: threading.Thread | None = None


def _spawner_loop() -> None:
    while True:
        cmd, kwargs, fut = _spawn_requests.get()
        try:
            fut.set_result(subprocess.Popen(cmd, **kwargs))
        except BaseException as exc:
            fut.set_exception(exc)


def _spawn(cmd: list[str], **kwargs) -> subprocess.Popen:
    """Popen from one long-lived thread: bwrap's --die-with-parent fires when the *thread* that started it
    ends, so a worker started from a short-lived grading thread would be killed with that thread."""
    global _spawner
    with _workers_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawner_loop, name="grading-spawner", daemon=True)
            _spawner.start()
    fut: Future = Future()
    _spawn_requests.put((cmd, kwargs, fut))
    return fut.result()


class Worker:
    """One warm worker process; one request at a time (callers hold `lock`). The backend (fork or spawn) is the
    judge's choice, passed to the worker on its command line."""

    def __init__(self, isolation: sandbox.Isolation | None = None, backend: sandbox.Backend | None = None,
                 log_dir: Path | None = None):
        self.isolation = isolation or sandbox.detect()
        self.backend = backend or sandbox.backend()
        self.lock = threading.Lock()
        self.loaded: set[str] = set()  # input keys this worker holds
        self.proc: subprocess.Popen | None = None
        self._ids = 0
        self._log_dir = log_dir
        self.log_path: Path | None = None

    def command(self) -> tuple[list[str], dict[str, str] | None]:
        """(argv, environment) that start the worker: wrapped in bubblewrap, or unwrapped with a scratch folder."""
        from lesson_utils.course_model import cache_root

        env = _worker_env(self.isolation)
        argv = [sys.executable, "-m", "grading.worker.main", "--backend", self.backend.name]
        if self.isolation.is_os_level:
            return sandbox.bwrap_command(argv, extra_ro=[cache_root().resolve()], env=env), None
        self.scratch = tempfile.mkdtemp(prefix="judge-scratch-")
        full_env = _kept_environment(os.environ)
        if os.environ.get("PYTHONPATH"):  # after the course's own code (tests/no_fork/ uses this)
            theirs = [os.path.abspath(d) for d in os.environ["PYTHONPATH"].split(os.pathsep) if d]
            env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *theirs])
        full_env.update(env, GRADING_SCRATCH=self.scratch, HOME=self.scratch, USERPROFILE=self.scratch,
                        HF_HOME=os.path.join(self.scratch, ".hf"), MPLCONFIGDIR=os.path.join(self.scratch, ".mpl"))
        return argv, full_env

    def start(self) -> "Worker":
        """Start the process and wait for its 'ready'; raises WorkerFailed (with its log) when it cannot."""
        cmd, full_env = self.command()
        log_dir = Path(self._log_dir or tempfile.mkdtemp(prefix="judge-log-"))
        self.log_path = log_dir / f"worker-{os.getpid()}-{id(self)}.log"
        try:
            with open(self.log_path, "wb") as log:
                self.proc = _spawn(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                   env=full_env, cwd=tempfile.gettempdir(), start_new_session=True)
        except OSError as exc:
            raise WorkerFailed(_("cannot start the grading worker ({error})", error=verbatim(exc))) from None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self._replies: "queue.Queue[tuple[dict, list[bytes]] | BaseException]" = queue.Queue()
        # A thread reads the replies (select() on a pipe does not work on Windows); _receive waits with a timeout.
        threading.Thread(target=self._read_replies, daemon=True, name="grading-replies").start()
        msg = self._receive(START_TIMEOUT_S, _("start"))[0]
        if msg.get("op") != "ready":
            raise WorkerFailed(_("the grading worker said {reply} instead of 'ready'", reply=verbatim(repr(msg))))
        atexit.register(self.close)
        return self

    def _log_tail(self) -> str:
        if self.log_path is None:
            return ""
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def _read_replies(self) -> None:
        while True:
            try:
                self._replies.put(wire.recv_json(self._out))
            except (wire.WireError, OSError, ValueError) as exc:
                self._replies.put(exc)
                return

    def _receive(self, timeout: float, what: str) -> tuple[dict, list[bytes]]:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise WorkerFailed(_("the grading worker did not answer within {seconds:.0f} s ({what}).",
                                 seconds=timeout, what=what) + "\n" + verbatim(self._log_tail()))
        if isinstance(reply, BaseException):
            self.close()
            raise WorkerFailed(_("the grading worker stopped ({what}: {error}; isolation: {isolation}).", what=what,
                                 error=verbatim(reply), isolation=self.isolation.name)
                               + "\n" + verbatim(self._log_tail())) from None
        return reply

    def _send(self, message: dict, blobs: list[bytes] = ()) -> None:
        try:
            wire.send_json(self._in, message, blobs)
        except OSError as exc:
            self.close()
            raise WorkerFailed(_("the grading worker is gone ({error}).", error=verbatim(exc))
                               + "\n" + verbatim(self._log_tail())) from None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send_inputs(self, key: str, blob: bytes) -> None:
        if key not in self.loaded:
            self._send({"op": "inputs", "key": key}, [blob])
            self._receive(INPUTS_TIMEOUT_S, _("receiving inputs"))
            self.loaded.add(key)

    def grade(self, request: dict, source: bytes, wait_s: float) -> tuple[dict, list[bytes]]:
        """Send one grading request; (reply, result blobs)."""
        self._ids += 1
        self._send(dict(request, op="grade", id=self._ids), [source])
        reply, blobs = self._receive(wait_s, _("grading"))
        if reply.get("op") != "graded" or reply.get("id") != self._ids:
            self.close()
            raise WorkerFailed(_("the grading worker answered out of turn: {reply}", reply=verbatim(str(reply)[:200])))
        return reply, blobs

    def close(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                wire.send_json(self._in, {"op": "exit"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


WORKER_MB = 3072  # what one busy worker holds: torch, transformers, the course model, inputs and a learner process


@dataclass(frozen=True)
class WorkerCount:
    """How many workers a class gets by default, and what bounded it."""

    count: int
    cores: int
    memory_mb: int | None  # memory available when counted (None: unknown here)


def available_memory_mb() -> int | None:
    """Memory available to new processes: MemAvailable on Linux, physical memory on other POSIX systems and
    Windows; None where neither can be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 20
    except (AttributeError, ValueError, OSError):
        pass
    if sys.platform == "win32":
        import ctypes

        class Status(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong)] + [
                (n, ctypes.c_ulonglong) for n in ("total", "avail", "page_total", "page_avail", "virt_total",
                                                  "virt_avail", "ext_avail")]

        status = Status(dwLength=ctypes.sizeof(Status))
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return status.avail >> 20
    return None


def default_workers() -> WorkerCount:
    """One worker per core (the cores this process may use), as many as memory holds at WORKER_MB each."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    memory = available_memory_mb()
    count = cores if memory is None else min(cores, max(1, memory // WORKER_MB))
    return WorkerCount(max(1, count), cores, memory)


_workers: dict[tuple[str, str], list["Worker | None"]] = {}  # (isolation, backend) -> this process's warm workers
_starting: dict[tuple[tuple[str, str], int], Future] = {}  # workers being started, for those who wait on them


def warm_worker(k: int = 0, backend: sandbox.Backend | None = None) -> Worker:
    """Warm worker number k of this process, started on first use and restarted if it died.

    Workers stay warm for the process's lifetime, so later grading calls (the next check() in a
    notebook, the solutions after the stubs, the next mutant round) skip the cold start. A worker being started
    (by prestart, or another thread) is waited for, never started twice.
    """
    isolation = sandbox.detect()
    backend = backend or sandbox.backend()
    key = (isolation.name, backend.name)
    with _workers_lock:
        slots = _workers.setdefault(key, [])
        while len(slots) <= k:
            slots.append(None)
        w = slots[k]
        if w is not None and w.alive:
            return w
        slots[k] = None
        starting = _starting.get((key, k))
        if starting is None:
            starting = _starting[(key, k)] = Future()
            mine = True
        else:
            mine = False
    if not mine:
        return starting.result()
    try:
        w = Worker(isolation, backend).start()  # outside the lock: several workers start in parallel
    except BaseException as exc:
        with _workers_lock:
            _starting.pop((key, k), None)
        starting.set_exception(exc)
        raise
    with _workers_lock:
        _workers[key][k] = w
        _starting.pop((key, k), None)
    starting.set_result(w)
    return w


def prestart(k: int = 0, backend: sandbox.Backend | None = None) -> None:
    """Start warm worker k in the background (it imports torch while this process builds inputs); a failure is
    left for the warm_worker call that needs it, which tries again and reports it."""
    def start() -> None:
        try:
            warm_worker(k, backend)
        except Exception:
            pass

    threading.Thread(target=start, name=f"grading-prestart-{k}", daemon=True).start()


def close_workers() -> None:
    """Close and forget every warm worker of this process; the next warm_worker() starts a fresh one."""
    with _workers_lock:
        started = [w for slots in _workers.values() for w in slots if w is not None]
        _workers.clear()
    for w in started:
        w.close()
