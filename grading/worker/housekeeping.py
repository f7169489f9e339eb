"""What the worker does between learner processes so that nothing of one reaches the next: no ptrace or /proc
access to the worker, no process left behind, no file left in the scratch root."""
from __future__ import annotations

import os
import shutil
import signal
import time


def nondumpable() -> None:
    """PR_SET_DUMPABLE 0: same-user processes (learner processes) cannot ptrace us or open /proc/<pid>/fd, environ
    or mem. Called by the worker, every spare and the judge of a class (grading/class_run.py)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass  # not Linux: there is no /proc to protect


def kill_strays(spares: set[int] = frozenset()) -> None:
    """Inside bubblewrap (its own PID namespace) SIGKILL every process but bubblewrap's, this worker and `spares`:
    a daemon that native code in a learner process started in a session of its own must not live on to reach the
    next one. Outside the sandbox other processes of this user are not ours to kill, and Python code cannot fork
    there."""
    if not os.environ.get("GRADING_IN_BWRAP"):
        return
    keep = {1, os.getpid(), os.getppid(), *spares}
    for _ in range(5):  # again, for what forked while we were killing
        seen = False
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in keep:
                try:
                    os.kill(int(name), signal.SIGKILL)
                    seen = True
                except OSError:
                    pass
        if not seen:
            return
        time.sleep(0.002)


def clean_tmp(root: str, keep: str | None = None) -> None:
    """Remove everything a learner process left in the scratch root (and /dev/shm inside the sandbox), but `keep`
    (the scratch folder of a spare kept for the same student's next chapter)."""
    for base in (root, "/dev/shm") if os.environ.get("GRADING_IN_BWRAP") else (root,):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            path = os.path.join(base, name)
            if keep is not None and path == keep:
                continue
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass
