"""A seccomp filter installed in each learner process (Linux) before learner code runs: no system call that reaches
another process. The kernel applies it to native code too, so it holds where the audit hooks do not (ctypes,
a compiled module), with or without bubblewrap; the learner process cannot remove it, and its children inherit it.

Refused with EPERM: prlimit64 on any process but itself (the worker's or a classmate's limits), ptrace,
process_vm_readv/writev (another process's memory), pidfd_open, pidfd_getfd, pidfd_send_signal; every x32 system
call on x86-64 (CPython never makes one; they would be a second way to the same calls).
"""
from __future__ import annotations

import os
import platform
import struct

# (AUDIT_ARCH, {name: number}) for the architectures this knows; elsewhere no filter is installed (said by install)
ARCHES = {
    "x86_64": (0xC000003E, {"prlimit64": 302, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311}),
    "aarch64": (0xC00000B7, {"prlimit64": 261, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271}),
}
PIDFD = {"pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438}  # the same number on every architecture
X32_BIT = 0x40000000

LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
RET_ALLOW, RET_EPERM = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
NR, ARCH, ARG0_LOW = 0, 4, 16  # offsets in struct seccomp_data (little-endian: the low half of args[0] first)


def program(pid: int, machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for process `pid` on `machine` (this one by default)."""
    arch, numbers = ARCHES[machine or platform.machine()]
    refused = [numbers["ptrace"], numbers["process_vm_readv"], numbers["process_vm_writev"], *PIDFD.values()]
    prog = [(LD_W_ABS, 0, 0, ARCH), (JEQ_K, 1, 0, arch), (RET_K, 0, 0, RET_ALLOW),  # another ABI: not ours to judge
            (LD_W_ABS, 0, 0, NR)]
    if arch == ARCHES["x86_64"][0]:
        prog += [(JSET_K, 0, 1, X32_BIT), (RET_K, 0, 0, RET_EPERM)]
    for nr in refused:
        prog += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, RET_EPERM)]
    prog += [(JEQ_K, 0, 4, numbers["prlimit64"]), (LD_W_ABS, 0, 0, ARG0_LOW),  # prlimit64(pid, ...)
             (JEQ_K, 2, 0, 0), (JEQ_K, 1, 0, pid & 0xFFFFFFFF), (RET_K, 0, 0, RET_EPERM),
             (RET_K, 0, 0, RET_ALLOW)]
    return prog


def install() -> str:
    """Install the filter in this process; '' when done, else why not (not Linux, an unknown architecture)."""
    if not os.sys.platform.startswith("linux"):
        return "not Linux"
    if platform.machine() not in ARCHES:
        return f"no seccomp filter for {platform.machine()}"
    import ctypes

    prog = program(os.getpid())
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: required to install a filter unprivileged
        return f"PR_SET_NO_NEW_PRIVS failed (errno {ctypes.get_errno()})"
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"PR_SET_SECCOMP failed (errno {ctypes.get_errno()})"
    return ""
