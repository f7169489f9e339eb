"""What the worker does between learner processes so that nothing of one reaches the next: no ptrace or /proc
access to the worker, no process left behind, no file left in the scratch root."""
from __future__ import annotations

import os
import shutil
import signal
import stat
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


FD_WALK = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd and os.listdir in os.supports_fd


def clean_tmp(root: str, keep: str | None = None) -> None:
    """Remove everything a learner process left in the scratch root (and /dev/shm inside the sandbox), but `keep`
    (the scratch folder of a spare kept for the same student's next chapter) and other file systems mounted there:
    inside bubblewrap the scratch root is /tmp, where a course checked out under /tmp is mounted read-only (walking
    it and its .venv for files it cannot delete cost 0.3 s per learner process)."""
    for base in (root, "/dev/shm") if os.environ.get("GRADING_IN_BWRAP") else (root,):
        try:
            if FD_WALK:
                kept = keep and os.path.normpath(os.path.dirname(keep)) == os.path.normpath(base)
                _empty(base, os.path.basename(keep) if kept else None)
            else:  # Windows: no descriptors of folders; nothing is mounted in its scratch root
                for name in os.listdir(base):
                    path = os.path.join(base, name)
                    if path != keep:
                        _ignoring_errors(lambda: shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path)
                                         else os.unlink(path))
        except OSError:
            pass


def _empty(base: str, keep: str | None) -> None:
    """Remove what is in `base` (but its entry `keep`) without crossing into another file system. One descriptor at
    a time and a loop, not recursion, so a tree deeper than the recursion limit or longer than PATH_MAX goes too."""
    device = os.lstat(base).st_dev
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    names: list[str] = []  # the folders from base down to where fd is
    visited: list[set[str]] = [{keep} if keep else set()]  # per level: the folders entered already
    try:
        while True:
            below = None
            for name in os.listdir(fd):
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if info.st_dev != device or name in visited[-1]:
                    continue  # a mount point (the course's read-only binds), or kept, or entered already
                if stat.S_ISDIR(info.st_mode):
                    below = below or name
                else:
                    _ignoring_errors(lambda: os.unlink(name, dir_fd=fd))
            if below is not None:
                visited[-1].add(below)
                child = os.open(below, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = child
                names.append(below)
                visited.append(set())
                continue
            if not names:
                return
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = parent
            visited.pop()
            done = names.pop()
            _ignoring_errors(lambda: os.rmdir(done, dir_fd=fd))  # fails where a mount point is left inside
    finally:
        os.close(fd)


def _ignoring_errors(remove) -> None:
    try:
        remove()
    except OSError:
        pass
