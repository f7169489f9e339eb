"""How the warm worker gets a learner process for one batch of exercises, on every system.

Two backends give the same `Child`: two pipes (results as wire frames, printed output) read by threads into one
queue, and poll/kill/wait. `supervisor.supervise` supervises either one with the same code, so timeouts, caps,
crashes and forged frames end the same way whichever made the child.

- fork (Linux): the child is forked from the worker's zygote (grading/worker/zygote.py), forked from the warm
  worker before any request: it holds torch, transformers, the course model and the inputs, never a submission;
  a child costs tens of milliseconds.
- spawn (Windows and macOS, or GRADING_BACKEND=spawn): a *spare* interpreter (grading/worker/spare.py) is started
  ahead of time and imports torch (and transformers and the course model once the worker has needed them);
  a whole request (one chapter of one learner file) is handed to a waiting spare of the kind it needs (with the
  course model or without), each exercise with its own copy of the course model (`copies_shared`), and the next
  spare of that kind starts while it grades. A spare that ran one learner's code is never given another's: it
  exits after its job, or waits for the same learner's next request on the same files (SpawnLauncher). No fork, no
  select on pipes, no POSIX-only call on this path where the system lacks it.
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import seccomp, wire
from .limits import IMPORT_TIMEOUT_S, KEPT_IDLE_S, SETUP_TIMEOUT_S, count_tasks, set_limits
from .windows_job import WindowsJob
from .zygote import Zygote, become_learner

POSIX = os.name == "posix"


def run_child(msg: dict, learner_file: str, scratch: str, result_fd: int, exercises: list[dict], inputs: dict,
              tasks: int, copies_shared: bool = False, ready: dict | None = None, confined: bool = False,
              cpu_limit: bool = True) -> None:
    """In the learner's process, either backend: confine (folder, limits, guard) and run the learner's code.
    copies_shared: each exercise gets its own copy of the course model and E (the spawn backend; see batches.py).
    ready: the zygote's watched copies, used instead of the learner process's own (grading/worker/watched.py).
    confined: a kept spare's next job (spare.py): the same student's, in the same scratch folder, already confined.
    cpu_limit: False in a spare kept for more jobs, whose CPU time adds up over chapters (the worker's clock still
    stops each one)."""
    from . import guard, learner_process
    from .transport import CopiedPerExercise, shared_objects

    keep = CopiedPerExercise(shared_objects()) if copies_shared else shared_objects()
    if not confined:
        os.chdir(scratch)
        os.environ.update(HOME=scratch, USERPROFILE=scratch, TMPDIR=scratch, TEMP=scratch, TMP=scratch,
                          TORCHINDUCTOR_CACHE_DIR=os.path.join(scratch, "torchinductor"))  # torch._dynamo's cache
        tempfile.tempdir = scratch
        budget = IMPORT_TIMEOUT_S + sum(msg["timeouts"].values()) + SETUP_TIMEOUT_S if cpu_limit else None
        set_limits(msg["memory_mb"], budget, tasks)
        seccomp.install()  # Linux: no system call that reaches another process (the worker's limits, its memory)
        guard.install(scratch, msg.get("blocked", []))
    learner_process.run(result_fd, learner_file, msg["module"], exercises, inputs, keep, ready)


class Child:
    """One learner process: its two pipes are read by threads into `events`; poll/kill/wait as Popen's."""

    starting = False  # True while a spare has not yet said it is ready (its start-up is not the learner's time)
    keep_alive = False  # a spare kept after its job for its owner's next request (SpawnLauncher.release)
    reused = False  # a kept spare that ran this owner's job before this one

    def __init__(self, result_fd: int, output_fd: int):
        self.events: queue.Queue[tuple[str, bytes]] = queue.Queue()
        for fd, channel in ((result_fd, "result"), (output_fd, "output")):
            threading.Thread(target=self._pump, args=(fd, channel), daemon=True, name=f"child-{channel}").start()

    def _pump(self, fd: int, channel: str) -> None:
        # The thread owns its descriptor and closes it at end of file, so a number is never reused under it;
        # one that a left-behind process keeps open only keeps this daemon thread waiting.
        try:
            while True:
                try:
                    data = os.read(fd, 1 << 20)
                except OSError:
                    data = b""
                self.events.put((channel, data))
                if not data:
                    return
        finally:
            try:
                os.close(fd)
            except OSError:
                pass

    def next_event(self, timeout: float | None) -> tuple[str, bytes] | None:
        try:
            return self.events.get(timeout=None if timeout is None else max(timeout, 0.0))
        except queue.Empty:
            return None

    def poll(self) -> int | None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError

    def wait(self) -> int:
        raise NotImplementedError


class ForkedChild(Child):
    def __init__(self, pid: int, result_fd: int, output_fd: int):
        self.pid, self._code = pid, None
        super().__init__(result_fd, output_fd)

    def poll(self) -> int | None:
        if self._code is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._code = os.waitstatus_to_exitcode(status)
        return self._code

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)  # the child's session: it and anything it left behind
        except OSError:
            pass

    def wait(self) -> int:
        if self._code is None:
            self._code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self._code


class SpawnedChild(Child):
    def __init__(self, proc: subprocess.Popen, job: "WindowsJob | None" = None):
        self.proc, self.starting, self.job = proc, True, job
        super().__init__(os.dup(proc.stdout.fileno()), os.dup(proc.stderr.fileno()))
        proc.stdout.close()
        proc.stderr.close()

    def poll(self) -> int | None:
        return self.proc.poll()

    def kill(self) -> None:
        if POSIX:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # started in a session of its own
                return
            except OSError:
                pass
        try:
            self.proc.kill()  # TerminateProcess on Windows
        except OSError:
            pass

    def wait(self) -> int:
        code = self.proc.wait()
        if self.job is not None:
            self.job.close()
        return code

    def end(self) -> None:
        self.kill()
        self.wait()


class ForkLauncher:
    """Children forked from the zygote (POSIX; grading/worker/zygote.py), itself forked from the warm worker before
    any request: no learner process inherits an earlier learner's code. The zygote holds the inputs; the worker
    holds only their names (ZygoteInputs)."""

    name = "fork"
    copies_shared = False  # a process per batch costs a fork: an exercise given the model runs last in its own

    def __init__(self):
        self.zygote = None

    def load_inputs(self, key: str, blob: bytes) -> tuple[dict, bool] | None:
        """Inputs go to the zygote; the worker keeps {exercise: (key, exercise)} and whether they are shared.
        None without a zygote: the worker keeps the inputs itself."""
        if self.zygote is None:
            return None
        names, shared = self.zygote.inputs(key, blob)
        return {n: (key, n) for n in names}, shared

    def start(self, msg: dict, exercises: list[dict], inputs: dict, scratch: str, learner_file: str) -> Child:
        if self.zygote is None:
            return self._fork_here(msg, exercises, inputs, scratch, learner_file)
        self._reap()
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        needed = {k: msg[k] for k in ("timeouts", "memory_mb", "blocked", "module") if k in msg}  # not call_graph
        job = {"msg": needed, "exercises": [dict(e, key=inputs[e["name"]][0]) for e in exercises], "scratch": scratch,
               "learner_file": learner_file, "tasks": count_tasks()}
        try:
            pid = self.zygote.fork(job, result_w, output_w)
        finally:
            os.close(result_w)
            os.close(output_w)
        return ForkedChild(pid, result_r, output_r)

    def _reap(self) -> None:
        """Collect what ended among this worker's children (processes a learner process left, re-parented here)."""
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.zygote is not None and pid == self.zygote.pid:
                raise RuntimeError("the zygote ended")  # the worker fails; the judge starts a fresh one

    def warm_up(self) -> None:
        """Fork the zygote now: the worker has been sent nothing yet."""
        if self.zygote is None and sys.platform.startswith("linux"):  # it needs a child subreaper (prctl)
            self.zygote = Zygote(run_child)

    def _fork_here(self, msg: dict, exercises: list[dict], inputs: dict, scratch: str, learner_file: str) -> Child:
        """Without a zygote (GRADING_BACKEND=fork off Linux): the child forked from the worker itself."""
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        tasks = count_tasks()
        pid = os.fork()
        if pid == 0:
            become_learner(result_w, output_w, lambda: run_child(msg, learner_file, scratch, result_w, exercises,
                                                                 inputs, tasks))
        os.close(result_w)
        os.close(output_w)
        return ForkedChild(pid, result_r, output_r)

    def observe(self, child: Child) -> dict | None:
        """What the zygote saw `child` (ended) change in its watched inputs (grading/worker/watched.py): exercise ->
        case -> paths; None where no zygote watched them (forked here)."""
        if self.zygote is None or not isinstance(child, ForkedChild):
            return None
        return self.zygote.observe(child.pid)

    def pids(self) -> set[int]:
        """The zygote, which the stray-killer inside bubblewrap must leave alone."""
        return {self.zygote.pid} if self.zygote is not None else set()

    @staticmethod
    def kept_scratch(_msg: dict) -> None:
        """Every forked child gets a fresh scratch folder (the fork costs milliseconds: nothing is kept)."""

    @staticmethod
    def release(_child: Child, _reusable: bool) -> None:
        """Nothing is kept: the child has ended."""

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()


class SpawnLauncher:
    """Children that are spare interpreters started ahead of time (no fork): see the module docstring.

    Spares come in two kinds, with the course model loaded ahead (--model) or not, and at most one of each kind
    waits: a request takes the kind its inputs need, and a new spare of that kind starts at once, while this one
    grades. A spare of the wrong kind is never handed over, so no spare's start is wasted on a model it never
    uses, and no request waits for one that must still load the model (a class's chapters alternate kinds).

    A request names its owner (msg["owner"]: the learner's folder and chapter files, byte for byte): the spare that
    graded it is kept, with its scratch folder, for that owner's next request (a class: the student's next chapter;
    a notebook: the next check() of unchanged files), so a student costs one spare, not one per chapter. It is
    never handed anyone else's request (another owner's request ends it), nor kept after a failure (a timeout, a
    crash, a channel out of order), nor handed a request that needs the model it lacks."""

    name = "spawn"
    copies_shared = True  # a process per batch costs a spare: a chapter runs in one, each exercise with its own model

    def __init__(self, root: str):
        self.root = root
        self.model = False  # the kind warm_up starts: the last request's (a check() again, likely the same chapter)
        self._spares: dict[bool, subprocess.Popen] = {}  # kind (with the model) -> the spare of that kind waiting
        self._kept: SpawnedChild | None = None  # the spare kept for its owner's next request (its .owner, .scratch)
        self._model_seen = False  # a request needed the model: a class's next students will need it too
        self._lock = threading.Lock()

    def _new_spare(self, model: bool) -> subprocess.Popen:
        argv = [sys.executable, "-m", "grading.worker.spare"] + (["--model"] if model else [])
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=self.root, start_new_session=POSIX, creationflags=flags)
        proc.job = WindowsJob(proc) if sys.platform == "win32" else None  # while it still waits for its job
        return proc

    def warm_up(self) -> None:
        """Start a spare of the kind the last request needed now, so the next request finds it (nearly) ready."""
        with self._lock:
            spare = self._spares.get(self.model)
            if spare is None or spare.poll() is not None:
                self._spares[self.model] = self._new_spare(self.model)

    def kept_scratch(self, msg: dict) -> str | None:
        """The scratch folder of the spare kept for this request's owner, if it is still waiting."""
        kept = self._kept
        mine = kept is not None and msg.get("owner") and kept.owner == msg["owner"] and kept.poll() is None
        return kept.scratch if mine else None

    def _take_kept(self, owner: str | None, model: bool, scratch: str) -> SpawnedChild | None:
        """The kept spare if this request may have it; otherwise it ends (it is never given another owner's)."""
        kept, self._kept = self._kept, None
        if kept is None or (owner and kept.owner == owner and (kept.model or not model) and kept.scratch == scratch
                            and kept.poll() is None):
            return kept
        kept.end()
        return None

    def start(self, msg: dict, exercises: list[dict], inputs: dict, scratch: str, learner_file: str) -> Child:
        from .transport import pickle_noting_fixtures

        # the course model and E by name: the spare resolves them in its own memory (loading what it lacks)
        blob, fixtures = pickle_noting_fixtures(inputs)
        owner = msg.get("owner")
        with self._lock:
            self._model_seen |= "course_model" in fixtures
            model = "course_model" in fixtures or bool(owner and self._model_seen)
            child = self._take_kept(owner, model, scratch)
            if child is None:
                proc = self._spares.pop(model, None)
                if proc is None or proc.poll() is not None:
                    proc = self._new_spare(model)
                child = SpawnedChild(proc, proc.job)
                child.model = model
            else:
                child.reused, child.starting = True, True
            self.model = model
        child.owner, child.keep_alive, child.scratch = owner, bool(owner), scratch
        job = {"msg": msg, "exercises": exercises, "scratch": scratch, "learner_file": learner_file,
               "keep": child.keep_alive}
        if child.job is not None:
            child.job.set_memory(int(msg["memory_mb"]))
        # Written by a thread: a spare still importing reads its job only when ready, and the pipe holds 64 kB.
        threading.Thread(target=self._hand_over, args=(child.proc, job, blob), daemon=True, name="spare-job").start()
        self.warm_up()  # the next spare of this kind imports while this one grades
        return child

    def release(self, child: Child, reusable: bool) -> None:
        """After a request: keep `child` for its owner's next request if it finished cleanly, KEPT_IDLE_S at most
        (an idle learner's spare must not hold its memory); else end it."""
        if not isinstance(child, SpawnedChild) or not child.keep_alive:
            return
        with self._lock:
            if reusable and child.poll() is None and self._kept is None:
                self._kept, child.kept_at = child, time.monotonic()
                threading.Thread(target=self._expire, args=(child, child.kept_at), daemon=True).start()
                return
        child.end()

    def _expire(self, child: SpawnedChild, kept_at: float) -> None:
        """After KEPT_IDLE_S, end `child` if it is still the spare kept at `kept_at` (not taken, or kept again)."""
        time.sleep(KEPT_IDLE_S)
        with self._lock:
            if self._kept is not child or child.kept_at != kept_at:
                return
            self._kept = None
        child.end()

    @staticmethod
    def _hand_over(proc: subprocess.Popen, job: dict, blob: bytes) -> None:
        try:
            wire.send_json(proc.stdin.fileno(), job, [blob])
        except OSError:
            pass  # it died; the supervisor sees its end
        finally:
            if not job["keep"]:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

    @staticmethod
    def observe(_child: Child) -> None:
        """No process outside the spare watches its inputs: the learner process's own report is all there is."""
        return None

    def pids(self) -> set[int]:
        """The waiting spares and the kept one, which the stray-killer inside bubblewrap must leave alone."""
        kept = self._kept
        return {spare.pid for spare in list(self._spares.values())} | ({kept.proc.pid} if kept else set())

    def close(self) -> None:
        with self._lock:
            spares, self._spares = list(self._spares.values()), {}
            kept, self._kept = self._kept, None
        if kept is not None:
            kept.end()
        for spare in spares:
            if spare.poll() is None:
                spare.kill()
                spare.wait()


def launcher(backend: str, root: str) -> "ForkLauncher | SpawnLauncher":
    """The launcher for the backend the judge chose (grading/engine/sandbox.py: backend), passed down on the
    worker's command line; never decided again here."""
    if backend == "fork" and not hasattr(os, "fork"):
        raise SystemExit("the judge asked for the fork backend where os.fork does not exist")
    return SpawnLauncher(root) if backend == "spawn" else ForkLauncher()
