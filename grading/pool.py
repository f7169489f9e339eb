"""The judge's handle on warm grading workers (grading/warm.py): start them in the sandbox, send them
inputs and learner files, get back outcomes. One mechanism serves `judge.py` (a class on every core)
and the notebook's `check()` (one worker kept warm for the session).
"""
from __future__ import annotations

import atexit
import io
import os
import pickle
import queue
import select
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import torch

from . import sandbox, wire

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 180.0  # importing torch + transformers in a fresh worker on a busy machine
PRELOAD_TIMEOUT_S = 240.0  # loading (and on first use verifying) the course model


class WorkerFailed(RuntimeError):
    """A worker could not start, or stopped answering; the message carries the end of its log."""


class FixturePickler(pickle.Pickler):
    """Pickles case inputs, sending the course model, its tokenizer, E and views of them by name."""

    def __init__(self, file, fixtures_by_id: dict[int, tuple], storages: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._by_id, self._storages = fixtures_by_id, storages

    def persistent_id(self, obj: Any):
        hit = self._by_id.get(id(obj))
        if hit is not None:
            return hit
        if _is_hf_model(obj):
            return hf_model_recipe(obj)
        if type(obj) in (torch.Tensor, torch.nn.Parameter) and self._storages:
            key = self._storages.get(obj.untyped_storage().data_ptr())
            if key is not None:
                return ("view", key, tuple(obj.shape), tuple(obj.stride()), obj.storage_offset(), obj.requires_grad)
        return None


def _is_hf_model(obj: Any) -> bool:
    return (isinstance(obj, torch.nn.Module) and type(obj).__module__.startswith("transformers.")
            and hasattr(obj, "config") and hasattr(obj.config, "to_dict"))


def hf_model_recipe(model: torch.nn.Module) -> tuple:
    """A transformers model as (class, config, weights, flags): rebuilt in the worker, not unpickled,
    because a model's forward hooks (hidden-state recording) do not survive pickling."""
    params = dict(model.named_parameters(remove_duplicate=False))
    meta = any(p.is_meta for p in params.values())
    state = {} if meta else {k: v.detach().clone() for k, v in model.state_dict().items()}
    plain = (bool, int, float, str, type(None))
    attrs = {name: {k: v for k, v in vars(m).items() if type(v) in plain and not k.startswith("_")}
             for name, m in model.named_modules()}  # e.g. a norm's eps changed on the instance
    return ("hf_model", type(model).__module__, type(model).__qualname__, model.config.to_dict(), state,
            {k: p.requires_grad for k, p in params.items()}, model.training, meta,
            str(next(iter(params.values())).dtype) if params else "torch.float32", attrs)


def pickle_inputs(inputs: dict[str, list]) -> bytes:
    """Pickled {exercise: [inputs per case]} for a worker; course fixtures travel by name."""
    from . import fixtures

    by_id: dict[int, tuple] = {}
    storages: dict[int, str] = {}
    if fixtures._load_course_model_once.cache_info().currsize:
        model, tok = fixtures.course_model()
        by_id[id(model)] = ("course_model",)
        by_id[id(tok)] = ("course_tokenizer",)
        for name, p in model.named_parameters():
            by_id[id(p)] = ("base", f"param:{name}")
            storages.setdefault(p.untyped_storage().data_ptr(), f"param:{name}")
    if fixtures.course_embedding.cache_info().currsize:
        e = fixtures.course_embedding()
        by_id[id(e)] = ("base", "course_embedding")
        storages[e.untyped_storage().data_ptr()] = "course_embedding"
    buf = io.BytesIO()
    FixturePickler(buf, by_id, storages).dump(inputs)
    return buf.getvalue()


def _worker_env(isolation: sandbox.Isolation) -> dict[str, str]:
    from lesson_utils.course_model import cache_root

    env = {"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "LLM_COURSE_CACHE": str(cache_root().resolve()), "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
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
    """One warm worker process; one request at a time (callers hold `lock`)."""

    def __init__(self, isolation: sandbox.Isolation | None = None, log_dir: Path | None = None):
        from lesson_utils.course_model import cache_root

        self.isolation = isolation or sandbox.detect()
        self.lock = threading.Lock()
        self.loaded: set[str] = set()  # input keys this worker holds
        self.preloaded = False
        self._ids = 0
        log_dir = Path(log_dir or tempfile.mkdtemp(prefix="judge-log-"))
        self.log_path = log_dir / f"worker-{os.getpid()}-{id(self)}.log"
        env = _worker_env(self.isolation)
        argv = [sys.executable, "-m", "grading.warm"]
        if self.isolation.is_os_level:
            cmd = sandbox.bwrap_command(argv, extra_ro=[cache_root().resolve()], env=env)
            full_env = None
        else:
            cmd = argv
            self.scratch = tempfile.mkdtemp(prefix="judge-scratch-")
            full_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
            full_env.update(env, GRADING_SCRATCH=self.scratch)
        try:
            with open(self.log_path, "wb") as log:
                self.proc = _spawn(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                   env=full_env, cwd=tempfile.gettempdir(), start_new_session=True)
        except OSError as exc:
            raise WorkerFailed(f"cannot start the grading worker ({exc})") from None
        self._in, self._out = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        msg = self._receive(START_TIMEOUT_S, "start")[0]
        if msg.get("op") != "ready":
            raise WorkerFailed(f"the grading worker said {msg!r} instead of 'ready'")
        atexit.register(self.close)

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def _receive(self, timeout: float, what: str) -> tuple[dict, list[bytes]]:
        ready, _, _ = select.select([self._out], [], [], timeout)
        if not ready:
            self.close()
            raise WorkerFailed(f"the grading worker did not answer within {timeout:.0f} s ({what}).\n{self._log_tail()}")
        try:
            return wire.recv_json(self._out)
        except (wire.WireError, OSError, ValueError) as exc:
            self.close()
            raise WorkerFailed(f"the grading worker stopped ({what}: {exc}; isolation: {self.isolation.name}).\n"
                               f"{self._log_tail()}") from None

    def _send(self, message: dict, blobs: list[bytes] = ()) -> None:
        try:
            wire.send_json(self._in, message, blobs)
        except OSError as exc:
            self.close()
            raise WorkerFailed(f"the grading worker is gone ({exc}).\n{self._log_tail()}") from None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def preload(self) -> None:
        """Load the course model in the worker now (children forked later inherit it)."""
        if not self.preloaded:
            self._send({"op": "preload"})
            self._receive(PRELOAD_TIMEOUT_S, "loading the course model")
            self.preloaded = True

    def send_inputs(self, key: str, blob: bytes) -> None:
        if key not in self.loaded:
            self._send({"op": "inputs", "key": key}, [blob])
            self._receive(PRELOAD_TIMEOUT_S, "receiving inputs")
            self.loaded.add(key)

    def grade(self, request: dict, source: bytes, wait_s: float) -> tuple[dict, list[bytes]]:
        """Send one grading request; (reply, result blobs)."""
        self._ids += 1
        self._send(dict(request, op="grade", id=self._ids), [source])
        reply, blobs = self._receive(wait_s, "grading")
        if reply.get("op") != "graded" or reply.get("id") != self._ids:
            self.close()
            raise WorkerFailed(f"the grading worker answered out of turn: {str(reply)[:200]}")
        return reply, blobs

    def close(self) -> None:
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


_workers: dict[str, list["Worker | None"]] = {}  # isolation name -> this process's warm workers


def worker(k: int = 0) -> Worker:
    """Warm worker number k of this process, started on first use and restarted if it died.

    Workers stay warm for the process's lifetime, so later grading calls (the next check() in a
    notebook, the solutions after the stubs, the next mutant round) skip the cold start.
    """
    isolation = sandbox.detect()
    with _workers_lock:
        slots = _workers.setdefault(isolation.name, [])
        while len(slots) <= k:
            slots.append(None)
        w = slots[k]
        if w is None or not w.alive:
            w = slots[k] = None
    if w is None:
        w = Worker(isolation)  # outside the lock: several workers start in parallel
        with _workers_lock:
            _workers[isolation.name][k] = w
    return w


def close_all() -> None:
    """Stop every warm worker of this process."""
    with _workers_lock:
        for slots in _workers.values():
            for w in slots:
                if w is not None:
                    w.close()
        _workers.clear()
