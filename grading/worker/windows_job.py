"""A Windows job object around one spare learner process (grading/worker/launchers.py, spawn backend)."""
from __future__ import annotations

import subprocess
import sys


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


