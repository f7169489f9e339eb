"""Audit-hook guards installed in the learner's process just before its code is imported.

Inside bubblewrap and without it alike: no new processes (subprocess, os.system, exec*, fork, posix_spawn),
at most MAX_THREADS Python threads, no signals to other processes, no changing resource limits,
no loading native code or symbols through ctypes, no compiled modules but the installed ones, no walking
the interpreter's objects with gc (get_objects, get_referrers, get_referents) to reach the grading code,
no swapping a function's code, no writing, deleting, renaming or linking any file outside the scratch folder,
no more than MAX_CREATED files, folders or links created in it, no sockets, no reading anything under the
blocked folders. The "open" event does not say which folder a `dir_fd=` argument names, so they also refuse
opening a folder outside the scratch folder (the only way to get such a descriptor), relative paths that climb
with `..`, and listing a descriptor they cannot trace to a path. Inside bubblewrap most of these cannot do harm
anyway; the hooks refuse them there too, so a gap in one layer is not a gap in both. Files that native code opens
itself (torch.save or safetensors given a path name) are not seen by any hook: only bubblewrap confines those.
Audit hooks cannot be removed once added; they do not contain native code, which is why the OS
sandbox is used wherever it runs.
"""
from __future__ import annotations

import os
import sys

SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
         "pty.spawn", "os.startfile")
NATIVE = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.addressof", "ctypes.cdata",
          "ctypes.call_function", "ctypes.create_string_buffer", "ctypes.string_at", "ctypes.wstring_at")
INTROSPECT = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
NATIVE_MODULES = ("_posixsubprocess", "_ctypes", "ctypes", "_cffi_backend", "cffi", "_testcapi", "_xxsubinterpreters")
SIGNALS = ("os.kill", "os.killpg", "signal.pthread_kill")
FILE_CHANGES = ("os.remove", "os.rename", "os.rmdir", "shutil.rmtree", "os.truncate", "os.chmod", "os.chown",
                "os.link", "os.symlink", "os.mkdir", "os.utime", "shutil.move", "shutil.copyfile")
SOCKETS = ("socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
MAX_THREADS = 8  # Python threads learner code may start (the kernel's RLIMIT_NPROC does not bind root)
MAX_CREATED = 64  # without bubblewrap: files, folders and links one child may create; with RLIMIT_FSIZE (16 MB)
# this bounds its disk use to about 1 GB
CREATING = ("os.mkdir", "os.symlink", "os.link", "os.rename", "shutil.move", "shutil.copyfile")
FILE_WRITING_MODULES = ("_gdbm", "_dbm", "dbm")  # open their files in C, unseen by the "open" event
THREAD_MODULES = ("_thread",)  # a fresh copy (deleted from sys.modules, imported again) would not be limited


class Refused(PermissionError):
    """An action the grading sandbox does not allow."""


def _path(arg) -> str | None:
    if isinstance(arg, (str, bytes, os.PathLike)):
        try:
            return os.path.realpath(os.fsdecode(arg))
        except (TypeError, ValueError):
            return None
    return None


def _climbs(arg) -> bool:
    """A relative path with a '..' part: with dir_fd= it may leave the folder the hook resolves it against."""
    if not isinstance(arg, (str, bytes, os.PathLike)):
        return False
    try:
        text = os.fsdecode(arg)
    except (TypeError, ValueError):
        return False
    return not os.path.isabs(text) and ".." in text.replace("\\", "/").split("/")


def _fd_path(fd: int) -> str | None:
    """The folder an open descriptor names (Linux /proc/self/fd, macOS F_GETPATH), or None."""
    try:
        return os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
    try:
        import fcntl

        raw = fcntl.fcntl(fd, getattr(fcntl, "F_GETPATH", 50), b"\0" * 1024)
        return os.path.realpath(raw.split(b"\0", 1)[0].decode())
    except (ImportError, OSError, ValueError):
        return None


def _native_name(name) -> bool:
    """Whether an imported module's name has a native-code module as any dotted part (something._ctypes)."""
    return any(part in NATIVE_MODULES for part in str(name).split("."))


def _native_file(path: str) -> bool:
    """Whether a compiled module's file is one of the native-code modules, whatever name it is imported as."""
    return os.path.basename(path).split(".")[0] in NATIVE_MODULES


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _limit_threads() -> None:
    """Refuse the (MAX_THREADS + 1)-th Python thread (Python 3.11 has no audit event for threads; for users
    other than root the kernel's RLIMIT_NPROC, set by the worker, is the hard limit)."""
    import _thread
    import threading

    count = [0]

    def limit(start):
        def limited(*args, **kwargs):
            count[0] += 1
            if count[0] > MAX_THREADS:
                raise Refused(f"Starting more than {MAX_THREADS} threads is not allowed while grading.")
            return start(*args, **kwargs)
        return limited

    # Every name a thread can be started by (start_new is an old alias; 3.13 adds start_joinable_thread), in
    # _thread and in threading's own copies; importing _thread afresh is refused by the hook (THREAD_MODULES).
    for module, names in ((_thread, ("start_new_thread", "start_new", "start_joinable_thread")),
                          (threading, ("_start_new_thread", "_start_joinable_thread"))):
        for name in names:
            if hasattr(module, name):
                setattr(module, name, limit(getattr(module, name)))


def _opens_for_writing(args: tuple) -> bool:
    """Whether an "open" audit event's (path, mode, flags) may write."""
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    return (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and bool(flags & WRITE_FLAGS))


def _installed_roots() -> list[str]:
    """Where installed compiled modules live: the interpreter's prefixes and site-packages (read-only to learner
    code: outside the sandbox's only writable folder, and refused for writing by the fallback's hooks)."""
    import site

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    return sorted({os.path.realpath(r) for r in roots if r})


def install(scratch: str, blocked: list[str]) -> None:
    """Add the guards (see the module docstring); `scratch` is the only folder learner code may change."""
    scratch = os.path.realpath(scratch)
    roots = [os.path.realpath(b) for b in blocked]

    _limit_threads()
    me = os.getpid()
    try:  # fork_exec is what subprocess calls after its audit event; called directly it would skip it
        import _posixsubprocess

        def refused(*_a, **_k):
            raise Refused("Starting other programs is not allowed while grading.")

        _posixsubprocess.fork_exec = refused
    except ImportError:
        pass

    installed = _installed_roots()
    created = [0]  # files, folders and links created in the scratch folder

    def create(what: str) -> None:
        created[0] += 1
        if created[0] > MAX_CREATED:
            raise Refused(f"Creating more than {MAX_CREATED} files or folders is not allowed while grading "
                          f"({what}).")

    def hook(event: str, args: tuple) -> None:
        if event == "import" and args and (_native_name(args[0]) or str(args[0]) in THREAD_MODULES):
            raise Refused(f"Importing {args[0]} (native code or process control) is not allowed while grading.")
        if event == "import" and len(args) > 1 and args[1] is not None:
            # The second import event of a compiled module names the file it loads, whatever that file is called.
            f = args[1]
            if type(f) is str and _native_file(f):
                raise Refused(f"Loading {os.path.basename(f)} (native code or process control) is not allowed "
                              "while grading.")
            if type(f) is not str or not all(any(_inside(q, r) for r in installed)
                                             for q in (os.path.abspath(f), os.path.realpath(f))):
                raise Refused(f"Loading the compiled module {f!r} is not allowed while grading: only the "
                              "installed packages (torch, numpy, ...) may load native code.")
        if event == "import" and args and str(args[0]).split(".")[0] in FILE_WRITING_MODULES:
            raise Refused(f"Importing {args[0]} (it writes files the guards cannot see) is not allowed while grading.")
        if event in SIGNALS and args and args[0] not in (me, 0):
            raise Refused("Sending signals to other processes is not allowed while grading.")
        if event == "resource.setrlimit":
            raise Refused("Changing resource limits is not allowed while grading.")
        if event.startswith(SPAWN):
            raise Refused("Starting other programs is not allowed while grading.")
        if event in NATIVE:
            raise Refused("Loading native code (ctypes) is not allowed while grading.")
        if event in INTROSPECT:
            raise Refused("Walking the interpreter's objects (gc.get_objects/get_referrers/get_referents) "
                          "is not allowed while grading.")
        if event == "object.__setattr__" and len(args) >= 2 and args[1] == "__code__":
            raise Refused("Replacing a function's __code__ is not allowed while grading.")
        if event in ("open", "os.listdir", "os.scandir", *FILE_CHANGES) and any(
                _climbs(a) for a in args[:2]):
            raise Refused("A relative path with '..' is not allowed while grading: name the file inside the "
                          "scratch folder, or give its full path.")
        if event in ("open", "os.listdir", "os.scandir") and args:
            p = _path(args[0])
            if p is None and event != "open" and isinstance(args[0], int):
                p = _fd_path(args[0])
                if p is None:
                    raise Refused("Listing a folder by its descriptor is not allowed while grading.")
            if p is None:
                return
            if event == "open" and not _inside(p, scratch) and os.path.isdir(p):
                raise Refused(f"Opening the folder {p} is not allowed while grading: only folders inside the "
                              "scratch folder may be opened (a descriptor of another one would reach past "
                              "these checks).")
            if any(_inside(p, r) for r in roots):
                raise Refused(f"Reading {p} is not allowed while grading: it belongs to the judge or to "
                              "another student.")
            if event == "open" and not _inside(p, scratch):
                if _opens_for_writing(args) and not p.startswith("/dev/null"):
                    raise Refused(f"Writing {p} is not allowed while grading: only the scratch folder "
                                  f"{scratch} is writable.")
            if event == "open" and _inside(p, scratch) and not os.path.lexists(p):
                if _opens_for_writing(args):
                    create(f"opening {os.path.basename(p)} to write")
        if event in FILE_CHANGES:
            paths = [q for q in (_path(a) for a in args[:2]) if q]
            if any(not _inside(q, scratch) for q in paths):
                raise Refused(f"{event} outside the scratch folder is not allowed while grading.")
            if event in CREATING:
                create(event)  # every one counts: renaming a folder away does not free its names
        if event == "sqlite3.connect" and args:
            db = _path(args[0])
            if db is not None and os.fsdecode(args[0]) not in ("", ":memory:"):
                if not _inside(db, scratch):
                    raise Refused(f"Writing {db} is not allowed while grading: only the scratch folder is writable.")
                create("sqlite3.connect")
        if event in SOCKETS:
            raise Refused("Network access is not allowed while grading.")

    sys.addaudithook(hook)
