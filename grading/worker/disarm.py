"""What the audit hook (grading/worker/guard.py) cannot see, taken away before learner code runs.

Some Python calls reach other processes or the network without raising an audit event: os.pidfd_open and
signal.pidfd_send_signal (a pidfd kills the judge past the hook's check of os.kill), os.setpriority and the
os.sched_set* calls (slowing a classmate), torch.distributed's stores and process groups (TCPStore opens a socket
in C++), and _imp.create_builtin (a fresh copy of posix, _signal or _thread would bring all of the above back, and
it raises no "import" event). Each is
removed, or replaced by a refusal, in the learner's process only: the worker never runs these functions.
The replacements hold nothing of the originals, so there is nothing for learner code to put back; where a wrapper
must call the original (create_builtin), it keeps it as a default argument, which the hook refuses to read.
Python threads are counted here too (Python 3.11 raises no audit event for them).
"""
from __future__ import annotations

import sys
import types

MAX_THREADS = 8  # Python threads learner code may start (the kernel's RLIMIT_NPROC does not bind root)
PROCESS_CALLS = {  # module -> names that act on other processes without an audit event
    "os": ("pidfd_open", "setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setparam"),
    "posix": ("pidfd_open", "setpriority", "sched_setaffinity", "sched_setscheduler", "sched_setparam"),
    "signal": ("pidfd_send_signal",),
    "_signal": ("pidfd_send_signal",),
}
DISTRIBUTED = ("_distributed_c10d", "_distributed_rpc", "_distributed_autograd", "_distributed_rpc_testing")


class Refused(PermissionError):
    """An action the grading sandbox does not allow."""


def _refuse(what: str):
    def refused(*_args, **_kwargs):
        raise Refused(f"{what} is not allowed while grading.")
    return refused


def limit_threads() -> None:
    """Refuse the (MAX_THREADS + 1)-th Python thread (for users other than root the kernel's RLIMIT_NPROC, set by
    the worker, is the hard limit); importing _thread afresh is refused by the hook."""
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
    # _thread and in threading's own copies.
    for module, names in ((_thread, ("start_new_thread", "start_new", "start_joinable_thread")),
                          (threading, ("_start_new_thread", "_start_joinable_thread"))):
        for name in names:
            if hasattr(module, name):
                setattr(module, name, limit(getattr(module, name)))


def remove_process_calls() -> None:
    """Delete the calls of PROCESS_CALLS wherever the module holds them."""
    for module_name, names in PROCESS_CALLS.items():
        module = sys.modules.get(module_name)
        for name in names:
            if module is not None and name in vars(module):
                delattr(module, name)


def refuse_fork_exec() -> None:
    """_posixsubprocess.fork_exec is what subprocess calls after its audit event; called directly it would skip it."""
    try:
        import _posixsubprocess
    except ImportError:  # Windows
        return
    _posixsubprocess.fork_exec = _refuse("Starting other programs")


def refuse_torch_distributed() -> None:
    """Every class of torch's C++ distributed modules (TCPStore, FileStore, the process groups, the RPC agents)
    refuses to be built: their __init__ is replaced on the class itself, so every name that reaches it (a
    subclass, torch.distributed.TCPStore, a class found through object.__subclasses__) meets the refusal."""
    c = getattr(sys.modules.get("torch"), "_C", None)
    for module_name in DISTRIBUTED:
        module = getattr(c, module_name, None)
        for value in list(vars(module).values()) if module is not None else ():
            if isinstance(value, type) and "__init__" in vars(value):
                try:
                    value.__init__ = _refuse(f"torch.distributed ({value.__name__})")
                except (TypeError, AttributeError):
                    pass  # an immutable class: built in C only by torch's own calls


def _create_checked(name: str, _original=None, _loaded=frozenset(), _audit=sys.audit, _Spec=types.SimpleNamespace,
                    _Refused=Refused):
    """The original _imp.create_builtin for a plain str name: a builtin module loaded before the guard (posix,
    _signal, _thread, ...) is refused a fresh copy; any other goes through the hook's "import" rules first. Its
    spec is of an immutable builtin type, so no learner code runs while this frame holds the original."""
    if name in _loaded:
        raise _Refused(f"Loading a fresh copy of {name} is not allowed while grading.")
    _audit("import", name, None, None, None, None)
    return _original(_Spec(name=name))


def _create_builtin(spec, _checked=_create_checked, _type=type, _str=str, _Refused=Refused):
    """_imp.create_builtin: the spec's name is read here, where no frame holds the original (reading it may run
    learner code, a property, which could walk up the stack), then passed on as a plain str."""
    name = spec.name
    if _type(name) is not _str:
        raise _Refused("Loading a builtin module by a spec whose name is not a str is not allowed while grading.")
    return _checked(name)


def guard_fresh_builtins() -> tuple:
    """Replace _imp.create_builtin (an import of a builtin module raises no audit event for it); returns the
    functions whose defaults the hook must refuse to show or change."""
    import _imp

    original = _imp.create_builtin
    if isinstance(original, types.FunctionType):  # already replaced (a second install in one process)
        return (_create_builtin, _create_checked)
    loaded = frozenset(sys.builtin_module_names) & frozenset(sys.modules)
    _create_checked.__defaults__ = (original, loaded) + _create_checked.__defaults__[2:]
    _imp.create_builtin = _create_builtin
    return (_create_builtin, _create_checked)


def disarm() -> tuple:
    """All of the above; returns the functions whose defaults and code the hook must keep from learner code."""
    limit_threads()
    refuse_fork_exec()
    remove_process_calls()
    refuse_torch_distributed()
    return guard_fresh_builtins()
