"""Learner code that tampers with what the audit hook relies on cannot switch its rules off (the hooks-only fallback).

The hook (grading/worker/guard.py) runs inside the learner's process. Each attack here first tries a forbidden read
as is, then changes something the hook could have consulted at event time (its module's globals, os.path, os,
builtins, a str subclass's methods, a path object's __fspath__, the locals of the hook's own frame), then tries the
read again. Each runs in its own learner process, graded with GRADING_SANDBOX=none so the hooks are the only layer
(the default backend here; `python course.py test` runs this file once more with the spawn backend). The control
runs the same code as plain Python: there the read succeeds, so each test can fail.
"""
from __future__ import annotations

import dis
import functools
import itertools
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from grading.engine import sandbox
from grading.worker import guard
from test_sandbox import probe

REPO = Path(__file__).resolve().parent.parent
SOLUTION = REPO / "solutions" / "ch01_embeddings.py"  # blocked: the answers
CHECK = REPO / "grading" / "checks" / "ch01_embeddings" / "named_cases.py"  # blocked: the judge's own folder

PROLOGUE = f"""
import builtins, gc, os, socket, sys
import grading.worker.guard as guard
SOLUTION, CHECK = {str(SOLUTION)!r}, {str(CHECK)!r}

class patched:
    '''Set obj.name = value for the with block, then put the old value back.'''
    def __init__(self, obj, name, value):
        self.obj, self.name, self.value = obj, name, value
    def __enter__(self):
        self.old = getattr(self.obj, self.name, None)
        setattr(self.obj, self.name, self.value)
    def __exit__(self, *exc):
        setattr(self.obj, self.name, self.old)

def read(path=SOLUTION, opener=open):
    '''What reading `path` gave: how much of it, or the exception's type.'''
    try:
        with opener(path) as f:
            return 'read ' + str(len(f.read()))
    except BaseException as e:
        return type(e).__name__

def attempt(action):
    try:
        action()
        return 'done'
    except BaseException as e:
        return type(e).__name__
"""

# Each attack: code that sets `before` (the read as is) and `after` (the read once it has tampered).
ATTACKS = {
    "rebind guard._inside": """
        before = read()
        with patched(guard, '_inside', lambda path, root: False):
            after = read()
    """,
    "rebind the guard's path functions": """
        before = read(CHECK)
        with patched(guard, '_path', lambda arg: None), patched(guard, '_text', lambda arg: None), \\
                patched(guard, '_realpath', lambda path: os.getcwd()):
            after = read(CHECK)
    """,
    "empty guard.INTROSPECT (a refused event)": """
        before = attempt(gc.get_objects)
        with patched(guard, 'INTROSPECT', ()):
            after = attempt(gc.get_objects)
    """,
    "empty guard.SOCKETS (a refused event)": """
        before = attempt(lambda: socket.socket().close())
        with patched(guard, 'SOCKETS', ()):
            after = attempt(lambda: socket.socket().close())
    """,
    "patch os.path.realpath": """
        before = read()
        with patched(os.path, 'realpath', lambda path, **kw: os.getcwd() + '/harmless.txt'):
            after = read()
    """,
    "patch os.path.abspath": """
        before = read()
        with patched(os.path, 'abspath', lambda path: os.getcwd() + '/harmless.txt'):
            after = read()
    """,
    "patch os.path.normpath": """
        before = read(CHECK)
        with patched(os.path, 'normpath', lambda path: os.getcwd() + '/harmless.txt'):
            after = read(CHECK)
    """,
    "patch os.path.join": """
        before = read()
        with patched(os.path, 'join', lambda a, *p: 'harmless.txt'):
            after = read()
    """,
    "patch os.fsdecode": """
        before = read()
        with patched(os, 'fsdecode', lambda path: 'harmless.txt'):
            after = read()
    """,
    "patch os.fspath": """
        before = read()
        with patched(os, 'fspath', lambda path: 'harmless.txt'):
            after = read()
    """,
    "patch os.getcwd after moving into the answers": """
        here = os.getcwd()
        os.chdir(os.path.dirname(SOLUTION))
        try:
            before = read(os.path.basename(SOLUTION))
            with patched(os, 'getcwd', lambda: here):
                after = read(os.path.basename(SOLUTION))
        finally:
            os.chdir(here)
    """,
    "patch os.stat to open a folder outside scratch": """
        repo = os.path.dirname(os.path.dirname(SOLUTION))
        def through_folder():
            fd = os.open(repo, os.O_RDONLY)
            return os.fdopen(os.open('solutions/' + os.path.basename(SOLUTION), os.O_RDONLY, dir_fd=fd))
        before = read(opener=lambda _: through_folder())
        not_a_folder = os.stat(SOLUTION)
        with patched(os, 'stat', lambda *a, **k: not_a_folder):
            after = read(opener=lambda _: through_folder())
    """,
    "patch builtins.any": """
        before = read()
        with patched(builtins, 'any', lambda items: False):
            after = read()
    """,
    "patch builtins.isinstance": """
        before = read()
        real = builtins.isinstance
        with patched(builtins, 'isinstance', lambda obj, kinds: False if type(obj) is str else real(obj, kinds)):
            after = read()
    """,
    "a str subclass whose methods lie": """
        class Lying(str):
            def startswith(self, *a):
                return False
            def partition(self, sep):
                return ('harmless.txt', '', '')
            def split(self, *a):
                return ['harmless.txt']
            def replace(self, *a):
                return 'harmless.txt'
        before = read()
        after = read(Lying(SOLUTION))
    """,
    "a path object that names another file the second time (refused before this fix too)": """
        class Fickle:
            calls = 0
            def __fspath__(self):
                Fickle.calls += 1
                return SOLUTION if Fickle.calls == 1 else 'harmless.txt'
        def os_open(path):
            return os.fdopen(os.open(path, os.O_RDONLY))
        before = read(opener=os_open)
        after = read(Fickle(), opener=os_open)
    """,
    "empty what the hook's frame holds, reached through a refusal's traceback": """
        def emptied(value):
            if type(value) in (list, dict, set):
                value.clear()
            for cell in getattr(value, '__closure__', None) or ():
                if type(cell.cell_contents) in (list, tuple, set, frozenset, str):
                    cell.cell_contents = type(cell.cell_contents)()
            if getattr(value, '__defaults__', None):
                value.__defaults__ = tuple(type(d)() if type(d) in (tuple, frozenset, str) else d
                                           for d in value.__defaults__)
        try:
            before = 'read ' + str(len(open(SOLUTION).read()))
        except PermissionError as e:
            before = type(e).__name__
            tb = e.__traceback__
            while tb is not None:
                hooks = tb.tb_frame.f_code.co_filename.endswith('guard.py')
                for value in list(tb.tb_frame.f_locals.values()) if hooks else ():
                    try:
                        emptied(value)
                    except PermissionError:
                        pass
                tb = tb.tb_next
        after = read()
    """,
    "ctypes reading memory, then loading a library (both refused before this fix too)": """
        def peek():
            import ctypes
            return ctypes.string_at(id(guard), 8)
        def load():
            import ctypes
            return ctypes.CDLL(None)
        before = attempt(peek)
        after = attempt(load)
    """,
}

CODE = {name: PROLOGUE + textwrap.dedent(attack) + "seen = before + ' / ' + after\n"
        for name, attack in ATTACKS.items()}


@pytest.fixture
def hooks_only(monkeypatch):
    """GRADING_SANDBOX=none: the audit hooks are the only thing between learner code and the files."""
    monkeypatch.setenv("GRADING_SANDBOX", "none")
    sandbox.reset_detection()
    yield
    sandbox.reset_detection()


@pytest.mark.parametrize("attack", ATTACKS)
def test_tampering_does_not_switch_the_guard_off(tmp_path, hooks_only, attack):
    seen = probe(tmp_path, CODE[attack])
    assert sandbox.detect().name == sandbox.AUDIT
    before, after = seen.split(" / ")
    assert before == "Refused", seen  # the hook stops the read as is ...
    assert after == "Refused", seen  # ... and after the tampering


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_attack_works_where_nothing_stops_it(tmp_path, attack):
    """The control: the same code as plain Python (no hooks) reads the file or runs the event, both times."""
    (tmp_path / "harmless.txt").write_text("nothing to see")
    done = subprocess.run([sys.executable, "-c", CODE[attack] + "print('SEEN<' + seen + '>SEEN')"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "SEEN<" in done.stdout, done.stdout + done.stderr
    before, after = done.stdout.split("SEEN<")[1].split(">SEEN")[0].split(" / ")
    assert before.startswith(("read", "done")) and after.startswith(("read", "done")), done.stdout
    if after.startswith("read"):
        assert after == before, done.stdout  # the very file that the hook refused


# ---------------------------------------------------------------- how the hook is built

IMMUTABLE = (str, int, bool, float, type(None), tuple, frozenset, type, types.BuiltinFunctionType,
             types.WrapperDescriptorType, types.MethodDescriptorType)


def test_the_hook_reads_nothing_learner_code_can_rebind():
    """The hook and every function it calls load no global or builtin name and close over nothing: what they use
    is a default argument bound at import (immutable, or another such function) or the bound rules tuple."""
    for fn in guard._HOOK_FUNCTIONS:
        loads = [i.argval for i in dis.get_instructions(fn) if i.opname in (
            "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE")]
        nested = [c for c in fn.__code__.co_consts if isinstance(c, types.CodeType)]
        assert not loads and not nested and fn.__closure__ is None and not fn.__kwdefaults__, (fn, loads, nested)
        for value in fn.__defaults__ or ():
            assert isinstance(value, IMMUTABLE) or value in guard._HOOK_FUNCTIONS, (fn, value)
            assert not isinstance(value, tuple) or all(isinstance(v, IMMUTABLE) for v in value), (fn, value)
    hook = guard._bound_hook("/tmp", ["/tmp/blocked"])
    assert isinstance(hook, functools.partial) and hook.func is guard._hook and not hook.keywords
    (scratch, roots, installed, me, created, ours), = hook.args
    assert isinstance(roots, tuple) and isinstance(installed, tuple) and isinstance(ours, frozenset)
    assert isinstance(created, itertools.count) and me == os.getpid()
    assert {id(f) for f in guard._HOOK_FUNCTIONS} == ours


@pytest.mark.skipif(os.name == "nt", reason="POSIX paths")
def test_paths_resolve_as_posixpath_realpath_does(tmp_path, monkeypatch):
    """The hook's own path resolution agrees with os.path.realpath: links part by part, '..' after them."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "up").symlink_to("a/b")
    (tmp_path / "a" / "abs").symlink_to(tmp_path / "a" / "b" / "f.txt")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    monkeypatch.chdir(tmp_path / "a")
    for path in ["b/f.txt", "../up/f.txt", str(tmp_path / "up" / ".." / "b"), str(tmp_path / "a" / "abs"),
                 str(tmp_path / "missing" / ".." / "a"), "./b//./f.txt", "/", "", str(tmp_path / "up") + "/",
                 str(tmp_path / "loop1" / "x"), "/tmp/../etc/./passwd"]:
        assert guard._realpath_posix(path) == os.path.realpath(path), path
        assert guard._normpath_posix(path) == os.path.abspath(path), path


def test_windows_paths_resolve_the_longest_existing_part():
    """ntpath.realpath's rule, from nt's C functions (here stand-ins): the final path of what exists, plus the rest."""
    existing = {"C:\\Users\\me": "\\\\?\\D:\\home\\me", "C:\\": "\\\\?\\C:\\",
                "\\\\srv\\share": "\\\\?\\UNC\\srv\\share"}

    def final(path):
        if path not in existing:
            raise FileNotFoundError(path)
        return existing[path]

    def resolve(path):
        return guard._realpath_nt(path, _full=lambda p: p, _final=final)

    assert resolve("C:\\Users\\me") == "D:\\home\\me"
    assert resolve("C:\\Users\\me\\new\\f.txt") == "D:\\home\\me\\new\\f.txt"
    assert resolve("C:\\nowhere\\f.txt") == "C:\\nowhere\\f.txt"
    assert resolve("\\\\srv\\share\\x") == "\\\\srv\\share\\x"


CTYPES_MEMORY = PROLOGUE + """
import ctypes  # already imported by torch before the hook was added: no import event, so not refused
tb = None
try:
    open(SOLUTION)
except PermissionError as e:
    tb = e.__traceback__
while tb is not None and tb.tb_frame.f_code.co_name != '_hook':
    tb = tb.tb_next
before = read()
for root in tb.tb_frame.f_locals['rules'][1]:  # the blocked folders' names, overwritten in place
    ctypes.memset(id(root) + sys.getsizeof('') - 1, ord('X'), 1)
after = read()
seen = before + ' / ' + after
"""


@pytest.mark.xfail(strict=True, reason="known hole of the hooks-only fallback: calls through ctypes' own function "
                   "pointers (memset, memmove, pointer indexing) raise no audit event in Python 3.11, and torch "
                   "imports ctypes before the hook is added; only bubblewrap contains them")
def test_ctypes_memory_writes_are_not_contained_by_the_hooks(tmp_path, hooks_only):
    before, after = probe(tmp_path, CTYPES_MEMORY).split(" / ")
    assert (before, after) == ("Refused", "Refused")
