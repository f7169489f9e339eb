"""Audit-hook guards installed in the learner's process just before its code is imported.

Inside bubblewrap and without it alike: no new processes (subprocess, os.system, exec*, fork, posix_spawn),
at most disarm.MAX_THREADS Python threads, no signals to other processes, no changing resource limits,
no loading native code or symbols through ctypes, no compiled modules but the installed ones, no walking
the interpreter's objects with gc (get_objects, get_referrers, get_referents) to reach the grading code,
no swapping a function's code, no writing, deleting, renaming or linking any file outside the scratch folder,
no more than MAX_CREATED files, folders or links created in it, no sockets or name look-ups, no reading the
blocked folders or another process's /proc/<pid>/, no prlimit on another process, no path they cannot resolve.
What raises no audit event (pidfds, os.sched_set*, torch.distributed's C++ stores, threads) is taken away or
counted by grading/worker/disarm.py. The "open" event does not say which folder a `dir_fd=` argument names, so
they also refuse opening a folder outside the scratch folder (the only way to get such a descriptor), paths
that climb with `..` (relative, or from inside the scratch folder: a link swapped there mid-check), and listing
a descriptor they cannot trace to a path. Inside bubblewrap most of these cannot do harm anyway; the hooks refuse
them there too, so a gap in one layer is not a gap in both. Files that native code opens itself (torch.save,
torch.from_file or safetensors given a path name) are not seen by any hook: only bubblewrap confines those.
Audit hooks cannot be removed once added; they do not contain native code, which is why the OS
sandbox is used wherever it runs.

Learner code runs in the same process as the hook, so the hook trusts nothing it can change, and runs none of
its code. Every function, constant and folder the hook uses is bound before learner code runs, as default
arguments (the hook's functions read no global or builtin name) and as one plain tuple of immutable values; path
arguments are read as the characters of their str (a str subclass's methods are never called, a path object's
__fspath__ neither: sqlite3.connect, which asks it again after its event, must be given a str); and paths are
resolved with the os module's C functions (os.lstat, os.readlink, os.getcwd), not with os.path, whose Python
code looks them up anew. Rebinding this module's globals, os.path, os or builtins therefore changes nothing;
neither does reaching the hook's frame through a refusal's traceback: it holds immutable values and functions
whose __code__ and defaults the hook refuses to replace. What the hooks cannot stop is a write to memory: torch
imports ctypes before they are added, and in Python 3.11 calls through ctypes' own function pointers (memmove,
memset) and pointer indexing raise no audit event, so learner code can rewrite the hook's data in place; that is
native code, contained only by the OS sandbox.
"""
from __future__ import annotations

import errno
import functools
import itertools
import os
import sys

from .disarm import Refused, disarm

SPAWN = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
         "pty.spawn", "os.startfile")
NATIVE = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.addressof", "ctypes.cdata",
          "ctypes.call_function", "ctypes.create_string_buffer", "ctypes.string_at", "ctypes.wstring_at")
INTROSPECT = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
NATIVE_MODULES = ("_posixsubprocess", "_ctypes", "ctypes", "_cffi_backend", "cffi", "_testcapi", "_xxsubinterpreters")
SIGNALS = ("os.kill", "os.killpg", "signal.pthread_kill")
FILE_CHANGES = ("os.remove", "os.rename", "os.rmdir", "shutil.rmtree", "os.truncate", "os.chmod", "os.chown",
                "os.link", "os.symlink", "os.mkdir", "os.utime", "shutil.move", "shutil.copyfile")
SOCKETS = ("socket.",)  # every socket event: new, connect, bind, sendto, and every look-up (getaddrinfo,
# gethostbyname, gethostbyaddr, getnameinfo, getservbyname, ...): a DNS query carries data out too
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
MAX_CREATED = 64  # without bubblewrap: files, folders and links one child may create; with RLIMIT_FSIZE (16 MB)
# this bounds its disk use to about 1 GB
CREATING = ("os.mkdir", "os.symlink", "os.link", "os.rename", "shutil.move", "shutil.copyfile")
FILE_WRITING_MODULES = ("_gdbm", "_dbm", "dbm")  # open their files in C, unseen by the "open" event
THREAD_MODULES = ("_thread",)  # a fresh copy (deleted from sys.modules, imported again) would not be limited
GUARD_ATTRIBUTES = ("__code__", "__defaults__", "__kwdefaults__")  # refused to change (or read) on the hook's
# functions and disarm.py's wrappers
PASSABLE = (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.ELOOP)  # a path part the kernel cannot pass
# either; any other error (ENAMETOOLONG past PATH_MAX, EIO) means the hook cannot tell where it leads: refused


# Every function below that the hook calls takes what it uses as default arguments, bound here at import (before
# any learner code runs): it reads no global or builtin name, so rebinding them later changes nothing.
_ERRORS = (OSError, ValueError, TypeError, UnicodeError)
_KIND, _LINK, _FOLDER = 0o170000, 0o120000, 0o040000  # st_mode's file-kind bits (stat.S_IFMT, S_IFLNK, S_IFDIR)
_NT = os.name == "nt"
try:
    from fcntl import fcntl as _fcntl
except ImportError:  # Windows
    _fcntl = None
try:
    from nt import _getfinalpathname as _final_path, _getfullpathname as _full_path
except ImportError:  # not Windows
    _final_path = _full_path = None


def _text(arg, _type=type, _str=str, _bytes=bytes, _sub=issubclass, _as_str=str.__str__, _decode=bytes.decode,
          _encoding=sys.getfilesystemencoding(), _errors=sys.getfilesystemencodeerrors(),
          _failures=_ERRORS) -> str | None:
    """A str or bytes argument as the characters the OS sees (a str subclass's own methods are never called), or
    None for anything else: a descriptor, None, times, or a path object (os functions and open() convert those
    before their audit event; shutil's events name them unconverted, but each file operation they make is checked)."""
    if _type(arg) is _str:
        return arg
    try:
        if _sub(_type(arg), _str):
            return _as_str(arg)
        return _decode(arg, _encoding, _errors) if _sub(_type(arg), _bytes) else None
    except _failures:
        return None


def _realpath_posix(path: str, _cwd=os.getcwd, _lstat=os.lstat, _readlink=os.readlink, _kind=_KIND, _link=_LINK,
                    _failures=_ERRORS, _oserror=OSError, _passable=PASSABLE, _Refused=Refused) -> str:
    """posixpath.realpath(path) from the os module's C functions: symbolic links resolved part by part, then '..'.
    A part it cannot look at for any reason but its absence (a path past PATH_MAX, say) raises Refused."""
    if not path.startswith("/"):
        path = _cwd() + "/" + path
    todo = path.split("/")
    todo.reverse()  # a stack: the next part is last
    done, links = "", 0
    while todo:
        name = todo.pop()
        if name == "" or name == ".":
            continue
        if name == "..":
            done = done.rpartition("/")[0]
            continue
        step = done + "/" + name
        try:
            target = _readlink(step) if _lstat(step).st_mode & _kind == _link else None
        except _oserror as e:
            if e.errno not in _passable:
                raise _Refused(f"A path the grading guard cannot follow to its end ({e.strerror}) is not allowed "
                               "while grading: use a short path inside the scratch folder.") from None
            target = None
        except _failures:
            target = None
        links += target is not None
        if target is None or links > 40:  # not a link, or a loop the OS refuses too (ELOOP): keep it as written
            done = step
            continue
        if target.startswith("/"):
            done = ""
        parts = target.split("/")
        parts.reverse()
        todo += parts
    return done or "/"


def _realpath_nt(path: str, _full=_full_path, _final=_final_path, _failures=_ERRORS) -> str:
    """ntpath.realpath(path) from nt's C functions: the full path, links resolved in the longest part that exists."""
    try:
        path = _full(path)
    except _failures:
        return path
    head, tail = path, ""
    while True:
        try:
            found = _final(head)
            break
        except _failures:
            parent, _, name = head.rstrip("\\").rpartition("\\")
            if not name or not parent:
                return path
            head, tail = (parent + "\\" if parent.endswith(":") else parent), (name + "\\" + tail if tail else name)
    if found.startswith("\\\\?\\UNC\\"):
        found = "\\\\" + found[8:]
    elif found.startswith("\\\\?\\"):
        found = found[4:]
    return (found.rstrip("\\") + "\\" + tail) if tail else found


def _normpath_posix(path: str, _cwd=os.getcwd) -> str:
    """posixpath.abspath(path): absolute, '.' and '..' removed by spelling alone."""
    if not path.startswith("/"):
        path = _cwd() + "/" + path
    parts: list[str] = []
    for name in path.split("/"):
        if name == ".." and parts:
            parts.pop()
        elif name not in ("", ".", ".."):
            parts.append(name)
    return "/" + "/".join(parts)


_realpath = _realpath_nt if _NT else _realpath_posix
_abspath = _full_path if _NT else _normpath_posix
_SEP = "\\" if _NT else "/"


def _inside(path: str, root: str, _sep=_SEP) -> bool:
    return path == root or path.startswith(root.rstrip(_sep) + _sep)


def _inside_any(path: str, roots: tuple, _inside=_inside) -> bool:
    for root in roots:
        if _inside(path, root):
            return True
    return False


def _climbs(text: str | None, scratch: str, _nt=_NT, _realpath=_realpath, _inside=_inside, _range=range,
            _len=len) -> bool:
    """A path with a '..' part that is relative (with dir_fd= it may leave the folder the hook resolves it against)
    or comes after a part inside the scratch folder: the hook resolves links and then '..', and a thread that swaps
    a link of the scratch folder between that and the open makes the OS climb elsewhere."""
    parts = (text.replace("\\", "/") if _nt else text).split("/") if text is not None else ()
    if ".." not in parts:
        return False
    if not (text.startswith("/") or (_nt and text[1:3] in (":/", ":\\"))):
        return True
    for i in _range(_len(parts) if not _nt else 0):
        if parts[i] == ".." and _inside(_realpath("/".join(parts[:i]) or "/"), scratch):
            return True
    return False


def _fd_path(fd: int, _readlink=os.readlink, _digits=int.__repr__, _fcntl=_fcntl, _realpath=_realpath,
             _failures=_ERRORS) -> str | None:
    """The folder an open descriptor names (Linux /proc/self/fd, macOS F_GETPATH), or None."""
    try:
        return _realpath(_readlink("/proc/self/fd/" + _digits(fd)))
    except _failures:
        pass
    try:
        raw = _fcntl(fd, 50, b"\0" * 1024)  # F_GETPATH on macOS
        return _realpath(raw.split(b"\0", 1)[0].decode())
    except _failures:
        return None


def _native_name(name: str, _native=frozenset(NATIVE_MODULES)) -> bool:
    """Whether an imported module's name has a native-code module as any dotted part (something._ctypes)."""
    for part in name.split("."):
        if part in _native:
            return True
    return False


def _base_name(path: str) -> str:
    return path.replace("\\", "/").rpartition("/")[2]


def _native_file(path: str, _native=frozenset(NATIVE_MODULES), _base_name=_base_name) -> bool:
    """Whether a compiled module's file is one of the native-code modules, whatever name it is imported as."""
    return _base_name(path).split(".")[0] in _native


def _opens_for_writing(args: tuple, _len=len, _type=type, _str=str, _int=int, _flags=WRITE_FLAGS) -> bool:
    """Whether an "open" audit event's (path, mode, flags) may write."""
    mode, flags = (args[1] if _len(args) > 1 else None), (args[2] if _len(args) > 2 else 0)
    if _type(mode) is _str:
        for c in "wax+":
            if c in mode:
                return True
    return _type(flags) is _int and flags & _flags != 0


def _exists(path: str, _lstat=os.lstat, _failures=_ERRORS) -> bool:
    try:
        _lstat(path)
        return True
    except _failures:
        return False


def _is_folder(path: str, _stat=os.stat, _kind=_KIND, _folder=_FOLDER, _failures=_ERRORS) -> bool:
    try:
        return _stat(path).st_mode & _kind == _folder
    except _failures:
        return False


def _installed_roots() -> list[str]:
    """Where installed compiled modules live: the interpreter's prefixes and site-packages (read-only to learner
    code: outside the sandbox's only writable folder, and refused for writing by the fallback's hooks)."""
    import site

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    return sorted({_realpath(r) for r in roots if r})


def _other_process(path: str, me: int, _digits=int.__repr__) -> bool:
    """Whether a resolved path is under /proc/<pid>/ of a process other than this one (its environment, its
    descriptors, its memory)."""
    if not path.startswith("/proc/"):
        return False
    first = path[6:].partition("/")[0]
    return first.isdigit() and first != _digits(me)


def _create(created, what: str, _next=next, _Refused=Refused, _max_created=MAX_CREATED) -> None:
    """Count one more file, folder or link made in the scratch folder; refuse it past MAX_CREATED."""
    if _next(created) > _max_created:
        raise _Refused(f"Creating more than {_max_created} files or folders is not allowed while grading ({what}).")


def _hook(rules: tuple, event: str, args: tuple, _text=_text, _create=_create, _realpath=_realpath, _abspath=_abspath,
          _inside=_inside, _inside_any=_inside_any, _climbs=_climbs, _fd_path=_fd_path, _native_name=_native_name,
          _native_file=_native_file, _base_name=_base_name, _opens_for_writing=_opens_for_writing, _exists=_exists,
          _is_folder=_is_folder, _other_process=_other_process, _len=len, _type=type, _str=str, _int=int,
          _sub=issubclass, _id=id, _Refused=Refused,
          _spawn=SPAWN, _native=frozenset(NATIVE), _introspect=frozenset(INTROSPECT), _signals=frozenset(SIGNALS),
          _file_changes=frozenset(FILE_CHANGES), _creating=frozenset(CREATING), _sockets=SOCKETS,
          _file_writing=frozenset(FILE_WRITING_MODULES), _thread_modules=frozenset(THREAD_MODULES),
          _guarded=frozenset(GUARD_ATTRIBUTES), _reading=frozenset(("open", "os.listdir", "os.scandir"))) -> None:
    """The audit hook (see the module docstring); `rules` = (scratch, blocked roots, installed roots, this
    process's id, a counter of what it created, the ids of the hook's own functions)."""
    scratch, roots, installed, me, created, ours = rules
    if event == "import" and args:
        name = _text(args[0]) or ""
        if _native_name(name) or name in _thread_modules:
            raise _Refused(f"Importing {name} (native code or process control) is not allowed while grading.")
        if _len(args) > 1 and args[1] is not None:
            # The second import event of a compiled module names the file it loads, whatever that file is called.
            f = args[1]
            if _type(f) is _str and _native_file(f):
                raise _Refused(f"Loading {_base_name(f)} (native code or process control) is not allowed "
                               "while grading.")
            if _type(f) is not _str or not (_inside_any(_abspath(f), installed)
                                           and _inside_any(_realpath(f), installed)):
                raise _Refused(f"Loading the compiled module {f!r} is not allowed while grading: only the "
                               "installed packages (torch, numpy, ...) may load native code.")
        if name.split(".")[0] in _file_writing:
            raise _Refused(f"Importing {name} (it writes files the guards cannot see) is not allowed while grading.")
    if event in _signals and args and args[0] != me and args[0] != 0:
        raise _Refused("Sending signals to other processes is not allowed while grading.")
    if event == "resource.setrlimit":
        raise _Refused("Changing resource limits is not allowed while grading.")
    if event == "resource.prlimit" and args and (args[0] != 0 and args[0] != me or _len(args) > 2
                                                 and args[2] is not None):
        raise _Refused("Changing resource limits, or reading another process's, is not allowed while grading.")
    if event.startswith(_spawn):
        raise _Refused("Starting other programs is not allowed while grading.")
    if event in _native:
        raise _Refused("Loading native code (ctypes) is not allowed while grading.")
    if event in _introspect:
        raise _Refused("Walking the interpreter's objects (gc.get_objects/get_referrers/get_referents) "
                       "is not allowed while grading.")
    if event == "object.__setattr__" and _len(args) >= 2:
        attribute = _text(args[1])
        if attribute == "__code__":
            raise _Refused("Replacing a function's __code__ is not allowed while grading.")
        if attribute in _guarded and _id(args[0]) in ours:
            raise _Refused("Changing the grading guard is not allowed while grading.")
    if event == "object.__getattr__" and _len(args) >= 2 and _id(args[0]) in ours and _text(args[1]) in _guarded:
        raise _Refused("Reading the grading guard's own values is not allowed while grading.")
    if event in _reading or event in _file_changes:
        texts = (_text(args[0]) if args else None, _text(args[1]) if _len(args) > 1 else None)
        if _climbs(texts[0], scratch) or _climbs(texts[1], scratch):
            raise _Refused("A path with '..' (relative, or climbing from inside the scratch folder) is not allowed "
                           "while grading: name the file inside the scratch folder, or give its full path.")
    if event in _reading and args:
        p = texts[0]
        if p is None and event != "open" and (args[0] is None or _sub(_type(args[0]), _int)):
            p = _fd_path(args[0]) if args[0] is not None else _realpath(".")
            if p is None:
                raise _Refused("Listing a folder by its descriptor is not allowed while grading.")
        elif p is not None:
            p = _realpath(p)
        if p is None:
            return
        if event == "open" and not _inside(p, scratch) and _is_folder(p):
            raise _Refused(f"Opening the folder {p} is not allowed while grading: only folders inside the "
                           "scratch folder may be opened (a descriptor of another one would reach past "
                           "these checks).")
        if _inside_any(p, roots):
            raise _Refused(f"Reading {p} is not allowed while grading: it belongs to the judge or to "
                           "another student.")
        if _other_process(p, me):
            raise _Refused(f"Reading {p} is not allowed while grading: it belongs to another process.")
        if event == "open" and not _inside(p, scratch):
            if _opens_for_writing(args) and not p.startswith("/dev/null"):
                raise _Refused(f"Writing {p} is not allowed while grading: only the scratch folder "
                               f"{scratch} is writable.")
        if event == "open" and _inside(p, scratch) and not _exists(p):
            if _opens_for_writing(args):
                _create(created, f"opening {_base_name(p)} to write")
    if event in _file_changes:
        for text in texts:
            if text is not None and not _inside(_realpath(text), scratch):
                raise _Refused(f"{event} outside the scratch folder is not allowed while grading.")
        if event in _creating:
            _create(created, event)  # every one counts: renaming a folder away does not free its names
    if event == "sqlite3.connect" and args:
        text = _text(args[0])
        if text is None:  # a path object: sqlite3 asks it for its name again after this event
            raise _Refused("Give sqlite3.connect the database's file name as a str while grading.")
        if text != "" and text != ":memory:":
            db = _realpath(text)
            if not _inside(db, scratch):
                raise _Refused(f"Writing {db} is not allowed while grading: only the scratch folder is writable.")
            _create(created, "sqlite3.connect")
    if event.startswith(_sockets):
        raise _Refused("Network access (sockets and name look-ups) is not allowed while grading.")


_HOOK_FUNCTIONS = (_hook, _create, _text, _realpath_posix, _realpath_nt, _normpath_posix, _inside, _inside_any, _climbs,
                   _fd_path, _native_name, _base_name, _native_file, _opens_for_writing, _exists, _is_folder,
                   _other_process)


def _bound_hook(scratch: str, blocked: list[str], wrappers: tuple = ()) -> functools.partial:
    """The audit hook for these folders: _hook with its rules bound now, as one tuple of immutable values
    (`wrappers`: disarm.py's functions, whose defaults the hook keeps from learner code as its own)."""
    rules = (_realpath(scratch), tuple(_realpath(b) for b in blocked), tuple(_installed_roots()), os.getpid(),
             itertools.count(1), frozenset(id(f) for f in (*_HOOK_FUNCTIONS, *wrappers)))
    return functools.partial(_hook, rules)


def install(scratch: str, blocked: list[str]) -> None:
    """Add the guards (see the module docstring); `scratch` is the only folder learner code may change."""
    sys.addaudithook(_bound_hook(scratch, blocked, disarm()))
