"""How the warm worker gets a learner process for one batch of exercises, on every system.

Two backends give the same `Child`: two pipes (results as wire frames, printed output) read by threads into one
queue, and poll/kill/wait. `main.grade_once` supervises either one with the same code, so timeouts, caps,
crashes and forged frames end the same way whichever made the child.

- fork (Linux): the child is forked from the warm worker, which already holds torch, transformers, the course
  model and the inputs; it costs tens of milliseconds.
- spawn (Windows and macOS, or GRADING_BACKEND=spawn): a *spare* interpreter (grading/worker/spare.py) is started
  ahead of time and imports torch and transformers (and loads the course model once the worker has needed it);
  a batch is handed to the waiting spare and the next spare starts while it grades. No fork, no select on pipes,
  no POSIX-only call on this path where the system lacks it.
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading

from ..i18n import _
from . import wire
from .limits import IMPORT_TIMEOUT_S, SETUP_TIMEOUT_S

FILE_LIMIT = 64 << 20  # largest file a child may write (RLIMIT_FSIZE); bubblewrap's tmpfs bounds the total
FALLBACK_FILE_LIMIT = 16 << 20  # without bubblewrap the scratch folder is on the real disk: 16 MB x 64 files (guard.MAX_CREATED)
EXTRA_TASKS = 4  # processes/threads a child may add (RLIMIT_NPROC, where the kernel applies it)
POSIX = os.name == "posix"


def backend_name() -> str:
    """The backend this worker uses: GRADING_BACKEND as the judge resolved it, else fork where fork exists."""
    wanted = os.environ.get("GRADING_BACKEND", "")
    if wanted in ("fork", "spawn"):
        return wanted if wanted == "spawn" or hasattr(os, "fork") else "spawn"
    return "fork" if hasattr(os, "fork") and sys.platform != "darwin" else "spawn"


def file_limit() -> int:
    return FILE_LIMIT if os.environ.get("GRADING_IN_BWRAP") else FALLBACK_FILE_LIMIT


def count_tasks() -> int:
    """Threads of this user visible here (in the sandbox's PID namespace: just ours); 0 where there is no /proc."""
    if not hasattr(os, "getuid") or not os.path.isdir("/proc"):
        return 0
    uid, n = os.getuid(), 0
    try:
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if os.stat(f"/proc/{pid}").st_uid == uid:
                        n += len(os.listdir(f"/proc/{pid}/task"))
                except OSError:
                    pass
    except OSError:
        return 64
    return n


def set_limits(memory_mb: int, cpu_s: float, tasks: int) -> None:
    """Address space (what is mapped now + memory_mb), CPU seconds, file size, processes, no core files.
    POSIX only (resource); elsewhere the worker's wall-clock limits are what bounds a child."""
    try:
        import resource
    except ImportError:
        return

    def lim(which, soft):
        try:
            _, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            resource.setrlimit(which, (soft, soft))  # hard = soft: learner code cannot raise it again
        except (ValueError, OSError):
            pass

    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        mapped = 0
    if mapped:  # macOS does not enforce RLIMIT_AS, and without /proc we cannot tell what is mapped
        lim(resource.RLIMIT_AS, mapped + memory_mb * 1024 * 1024)
    lim(resource.RLIMIT_CPU, int(cpu_s) + 1)
    lim(resource.RLIMIT_FSIZE, file_limit())
    lim(resource.RLIMIT_CORE, 0)
    if tasks:
        lim(resource.RLIMIT_NPROC, tasks + EXTRA_TASKS)


def run_child(msg: dict, learner_file: str, scratch: str, result_fd: int, exercises: list[dict], inputs: dict,
              tasks: int) -> None:
    """In the learner's process, either backend: confine (folder, limits, guard) and run the learner's code."""
    from . import child, guard
    from .transport import shared_objects

    os.chdir(scratch)
    os.environ.update(HOME=scratch, USERPROFILE=scratch, TMPDIR=scratch, TEMP=scratch, TMP=scratch)
    tempfile.tempdir = scratch
    budget = IMPORT_TIMEOUT_S + sum(msg["timeouts"].values()) + SETUP_TIMEOUT_S
    set_limits(msg["memory_mb"], budget, tasks)
    keep = shared_objects()
    guard.install(scratch, msg.get("blocked", []))
    child.run(result_fd, learner_file, msg["module"], exercises, inputs, keep)


def describe_exit(code: int) -> str:
    """A child's return code in words: a POSIX signal (negative), a Windows NTSTATUS crash code, or the exit code."""
    if code < 0:
        sig = -code
        names = {"SIGXCPU": _("the CPU-time limit"), "SIGXFSZ": _("the file-size limit ({mb} MB)",
                                                                  mb=file_limit() >> 20),
                 "SIGKILL": _("killed"), "SIGSEGV": _("a crash in native code"),
                 "SIGABRT": _("an abort, often out of memory")}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return _("signal {name}: {meaning}", name=name, meaning=names.get(name, _("a signal")))
    ntstatus = {0xC0000005: _("a crash in native code (access violation)"), 0xC00000FD: _("a stack overflow"),
                0xC0000017: _("out of memory"), 0xC0000409: _("an abort in native code")}
    if code & 0xFFFFFFFF in ntstatus:
        hex_code = hex(code & 0xFFFFFFFF)
        return _("exit code {code}: {meaning}", code=hex_code, meaning=ntstatus[code & 0xFFFFFFFF])
    return _("exit code {code}", code=code)


class Child:
    """One learner process: its two pipes are read by threads into `events`; poll/kill/wait as Popen's."""

    starting = False  # True while a spare has not yet said it is ready (its start-up is not the learner's time)

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


class WindowsJob:
    """A Windows job object around one spare: no child processes at all, a memory ceiling, killed with the worker
    (and never a crash dialog that waits for a click). Built with ctypes in the *worker*, never in learner code.
    Where it cannot be made (not Windows, an old one, a parent job that forbids it) `why_not` says so and grading
    goes on with the wall-clock limits and the audit hooks."""

    BASELINE_MB = 2048  # what torch, transformers and the course model commit before the learner's code runs

    def __init__(self, proc: subprocess.Popen):
        self.handle, self.why_not = None, None
        if sys.platform != "win32":
            self.why_not = "not Windows"
            return
        try:
            import ctypes
            from ctypes import wintypes

            self._k32 = ctypes.WinDLL("kernel32", use_last_error=True)
            self.handle = self._k32.CreateJobObjectW(None, None)
            if not self.handle or not self._limit(None):
                raise OSError(ctypes.get_last_error(), "CreateJobObject/SetInformationJobObject")
            if not self._k32.AssignProcessToJobObject(wintypes.HANDLE(self.handle), wintypes.HANDLE(proc._handle)):
                raise OSError(ctypes.get_last_error(), "AssignProcessToJobObject")
        except Exception as exc:  # noqa: BLE001 - any failure leaves grading on its other limits
            self.why_not = f"no job object ({exc})"

    def _limit(self, memory_mb: int | None) -> bool:
        import ctypes
        from ctypes import wintypes

        class Basic(ctypes.Structure):
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                        ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                        ("SchedulingClass", wintypes.DWORD)]

        class Extended(ctypes.Structure):
            _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", ctypes.c_ulonglong * 6),
                        ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                        ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

        info = Extended()
        # ACTIVE_PROCESS (1 process: no children), DIE_ON_UNHANDLED_EXCEPTION, KILL_ON_JOB_CLOSE, PROCESS_MEMORY
        info.BasicLimitInformation.LimitFlags = 0x8 | 0x400 | 0x2000 | (0x100 if memory_mb else 0)
        info.BasicLimitInformation.ActiveProcessLimit = 1
        if memory_mb:
            info.ProcessMemoryLimit = (memory_mb + self.BASELINE_MB) << 20
        return bool(self._k32.SetInformationJobObject(wintypes.HANDLE(self.handle), 9, ctypes.byref(info),
                                                      ctypes.sizeof(info)))

    def set_memory(self, memory_mb: int) -> None:
        if self.handle:
            self._limit(memory_mb)

    def close(self) -> None:
        if self.handle:
            from ctypes import wintypes

            self._k32.CloseHandle(wintypes.HANDLE(self.handle))  # kills whatever is still in it
            self.handle = None


class ForkLauncher:
    """Children forked from the warm worker (POSIX)."""

    name = "fork"

    def start(self, msg: dict, exercises: list[dict], inputs: dict, scratch: str, learner_file: str) -> Child:
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        tasks = count_tasks()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(result_r)
                os.close(output_r)
                os.setsid()
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(output_w, 1)
                os.dup2(output_w, 2)
                os.closerange(3, result_w)  # shed the worker's descriptors: only the two pipes are left
                os.closerange(result_w + 1, 65536)
                run_child(msg, learner_file, scratch, result_w, exercises, inputs, tasks)
            except BaseException:
                try:
                    os.write(2, b"grading child failed:\n")
                except OSError:
                    pass
            finally:
                os._exit(0)
        os.close(result_w)
        os.close(output_w)
        return ForkedChild(pid, result_r, output_r)

    def warm_up(self) -> None:
        pass

    def pids(self) -> set[int]:
        return set()

    def close(self) -> None:
        pass


class SpawnLauncher:
    """Children that are spare interpreters started ahead of time (no fork): see the module docstring."""

    name = "spawn"

    def __init__(self, root: str):
        self.root = root
        self.model = False  # spares load the course model once a batch has needed it
        self._spare: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def _new_spare(self) -> subprocess.Popen:
        argv = [sys.executable, "-m", "grading.worker.spare"] + (["--model"] if self.model else [])
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=self.root, start_new_session=POSIX, creationflags=flags)
        proc.job = WindowsJob(proc) if sys.platform == "win32" else None  # while it still waits for its job
        return proc

    def warm_up(self) -> None:
        """Start the first spare now, so the first check finds it (nearly) ready."""
        with self._lock:
            if self._spare is None or self._spare.poll() is not None:
                self._spare = self._new_spare()

    def start(self, msg: dict, exercises: list[dict], inputs: dict, scratch: str, learner_file: str) -> Child:
        from .transport import pickle_inputs

        blob = pickle_inputs(inputs)  # the course model and E by name: the spare resolves them in its own memory
        from . import inputs as course_inputs

        with self._lock:
            proc = self._spare if self._spare is not None and self._spare.poll() is None else self._new_spare()
            self._spare = None
            if course_inputs.course_model_loaded() and not self.model:
                self.model = True
        job = {"msg": msg, "exercises": exercises, "scratch": scratch, "learner_file": learner_file}
        if proc.job is not None:
            proc.job.set_memory(int(msg["memory_mb"]))
        child = SpawnedChild(proc, proc.job)
        # Written by a thread: a spare still importing reads its job only when ready, and the pipe holds 64 kB.
        threading.Thread(target=self._hand_over, args=(proc, job, blob), daemon=True, name="spare-job").start()
        self.warm_up()  # the next spare imports while this one grades
        return child

    @staticmethod
    def _hand_over(proc: subprocess.Popen, job: dict, blob: bytes) -> None:
        try:
            wire.send_json(proc.stdin.fileno(), job, [blob])
        except OSError:
            pass  # it died; the supervisor sees its end
        finally:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def pids(self) -> set[int]:
        """The waiting spare, which the stray-killer inside bubblewrap must leave alone."""
        spare = self._spare
        return {spare.pid} if spare is not None else set()

    def close(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.poll() is None:
            spare.kill()
            spare.wait()


def launcher(root: str) -> "ForkLauncher | SpawnLauncher":
    return SpawnLauncher(root) if backend_name() == "spawn" else ForkLauncher()
