"""Every limit of the worker and its learner processes: the time limits the judge shares (it waits a little longer
than the worker allows), the caps on what a learner process may print and send, and the OS limits set in it."""
from __future__ import annotations

import os

MEMORY_MB = 6144  # the learner process's memory limit by default (judge.py --memory-mb, check(memory_mb=))
LEAST_MEMORY_MB = 64  # the least accepted: below it, a slip (5 meant as 5 GB) or a negative number (no limit at all)
IMPORT_TIMEOUT_S = 120.0  # importing the learner's file, before any exercise starts
SETUP_TIMEOUT_S = 60.0  # copying one exercise's inputs (outside its own time limit)
DEPENDENT_TIMEOUT_S = 5.0  # the limit of an exercise that calls the learner's own function that timed out: over 10x
# the slowest whole exercise (greedy_generate, 0.36 s here), and each one that waits on a hung function burns it all
REQUEST_TIMEOUT_S = 20.0  # a request from the judge that has begun must have arrived whole by then
START_TIMEOUT_S = 180.0  # a spare (spawn backend) importing torch and transformers before it can take its job
KEPT_IDLE_S = 120.0  # a spare kept for its owner's next request (spawn backend) ends after waiting this long

OUTPUT_LIMIT = 8 << 20  # bytes a learner process may print in total before it is stopped
OUTPUT_KEEP = 16 << 10  # bytes of that output kept for the worker's log
RESULT_LIMIT = 768 << 20  # bytes of results one learner process may send back
PICKLE_LIMIT = 8 << 20  # bytes of one exercise's result that are structure (the torch.save file's data.pkl, not its
# tensors' storages): each byte may become a Python object in the judge, so this bounds what loading it costs there

FILE_LIMIT = 64 << 20  # largest file a learner process may write (RLIMIT_FSIZE); bubblewrap's tmpfs bounds the total
FALLBACK_FILE_LIMIT = 16 << 20  # without bubblewrap the scratch folder is on the real disk: 16 MB x 64 files
EXTRA_TASKS = 4  # processes/threads a learner process may add (RLIMIT_NPROC, where the kernel applies it)


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


def set_limits(memory_mb: int, cpu_s: float | None, tasks: int) -> None:
    """Address space (what is mapped now + memory_mb), CPU seconds (None: none), file size, processes, no core files.
    POSIX only (resource); elsewhere the worker's wall-clock limits (and on Windows the job object) bound it."""
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
    if cpu_s is not None:
        lim(resource.RLIMIT_CPU, int(cpu_s) + 1)
    lim(resource.RLIMIT_FSIZE, file_limit())
    lim(resource.RLIMIT_CORE, 0)
    if tasks:
        lim(resource.RLIMIT_NPROC, tasks + EXTRA_TASKS)
