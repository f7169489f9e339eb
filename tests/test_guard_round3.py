"""Issue 38, round three: the Python-level attacks that escaped the audit hooks (GRADING_SANDBOX=none, forked or
spawned with os.fork removed) are refused in every mode, and bubblewrap contains them too.

Every attack runs in one learner process per mode (tests/test_sandbox.py: probe), each in its own try, and reports
what it met; the judge's side looks for the harm itself (a connection to its listener). The control runs the same
code as plain Python, where every attack gets through, so each test here can fail. What only an OS wall stops
(torch.from_file: native code opening a file) is shown to get through the hooks alone.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from grading.engine import integrity, sandbox
from grading.worker import guard
from test_sandbox import probe

REPO = Path(__file__).resolve().parent.parent
SOLUTION = REPO / "solutions" / "ch01_embeddings.py"
NO_FORK = REPO / "tests" / "no_fork"
MARKER = "TEACHER_TOKEN_ROUND3"  # a variable of the teacher's environment
MODES = ("bubblewrap", "hooks", "hooks-spawn")

PROLOGUE = """
import os, resource, signal, socket, sys
SOLUTION, JUDGE, PORT, MARKER = {solution!r}, {judge}, {port}, {marker!r}

def past_path_max():
    '''A folder chain longer than PATH_MAX whose deepest folder links back to the scratch folder: the path
    /scratch/deep/more/q/../../..(to /)/solutions/... looks inside scratch to a resolver that cannot see past it.'''
    scratch, name = os.getcwd(), 'd' * 250
    for _ in range(18):
        os.mkdir(name)
        os.chdir(name)
    os.symlink(scratch, 'q')
    os.chdir(scratch)
    half = '/'.join([name] * 9)
    os.symlink(half, 'deep')
    os.symlink(half, half + '/more')
    return 'read ' + str(len(open(scratch + '/deep/more/q' + '/..' * scratch.count('/') + SOLUTION).read()))

def tcp_store():
    import datetime, torch.distributed
    torch.distributed.TCPStore('127.0.0.1', PORT, 2, False, datetime.timedelta(seconds=3))

def fresh_posix():
    import _imp, importlib.machinery
    return _imp.create_builtin(importlib.machinery.ModuleSpec('posix', None)).pidfd_open

def writable_on_sys_path():
    '''A folder other learner processes write too (/tmp, this scratch folder or the scratch root above it) on
    sys.path: a module planted there runs in every later process that looks there first.'''
    here = os.getcwd()
    up = os.path.dirname(here)
    shared = {{os.path.realpath(p) for p in ('/tmp', here, up, os.path.dirname(up))}}
    found = [p for p in sys.path if os.path.realpath(p or '.') in shared]
    if not found:
        raise LookupError('none')
    return found

def from_file():
    import torch
    return torch.from_file(SOLUTION, size=64, dtype=torch.uint8)

def teacher_variables():
    with open('/proc/self/environ', 'rb') as f:
        if MARKER in str(os.environ) or MARKER.encode() in f.read():
            return 'seen'
    raise LookupError('none')
"""

ATTACKS = {  # name -> statement; 'done' in the outcome is an escape
    "a path past PATH_MAX": "past_path_max()",
    "gethostbyname": "socket.gethostbyname('localhost')",
    "gethostbyaddr": "socket.gethostbyaddr('127.0.0.1')",
    "getnameinfo": "socket.getnameinfo(('127.0.0.1', 80), 0)",
    "getaddrinfo": "socket.getaddrinfo('localhost', 80)",
    "torch's TCPStore": "tcp_store()",
    "a pidfd of the judge": "signal.pidfd_send_signal(os.pidfd_open(JUDGE), 0)",
    "prlimit on the parent": "resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, "
                             "resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE))",
    "the judge's environment": "open(f'/proc/{JUDGE}/environ', 'rb').read()",
    "the judge's pipes": "os.listdir(f'/proc/{JUDGE}/fd')",
    "a fresh copy of posix": "fresh_posix()",
    "a writable folder on sys.path": "writable_on_sys_path()",
    "the teacher's variables": "teacher_variables()",
    "torch.from_file reading the answers": "from_file()",
}
# Native code opening a file by name: no audit event, and torch.from_file lives on an immutable class the hooks
# cannot replace. Only an OS wall contains it; where the hooks are alone it gets through (README's table says so).
OS_WALL_ONLY = ("torch.from_file reading the answers",)


def attack_code(port: int, judge: int) -> str:
    """Every attack in its own try; `seen` = 'name: outcome | ...'."""
    lines = [PROLOGUE.format(solution=str(SOLUTION), judge=judge, port=port, marker=MARKER), "_out = []"]
    for name, statement in ATTACKS.items():
        lines += ["try:", f"    {statement}", f"    _out.append({name!r} + ': done')",
                  "except BaseException as e:", f"    _out.append({name!r} + ': ' + type(e).__name__)"]
    return "\n".join(lines) + "\nseen = ' | '.join(_out)\n"


def outcomes(seen: str) -> dict[str, str]:
    return dict(item.split(": ", 1) for item in seen.split(" | "))


class Listener:
    """A port on the teacher's machine that takes every connection and closes it at once (a TCPStore client then
    fails in seconds instead of waiting for an answer); `reached()` says whether anything connected."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.port, self.hits = self.sock.getsockname()[1], 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            conn.close()

    def reached(self) -> bool:
        self.sock.close()
        return self.hits > 0


@pytest.fixture
def mode(request, monkeypatch):
    """The judge set up for one mode, with a teacher's variable in its environment."""
    monkeypatch.setenv(MARKER, "secret")
    if request.param == "bubblewrap":
        sandbox.reset_detection()
        if not sandbox.detect().is_os_level:
            pytest.skip(f"no OS sandbox here: {sandbox.detect()}")
    else:
        monkeypatch.setenv("GRADING_SANDBOX", "none")
    if request.param == "hooks-spawn":  # macOS and Windows: spare interpreters, and no os.fork in them
        monkeypatch.setenv("GRADING_BACKEND", "spawn")
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(NO_FORK), os.environ.get("PYTHONPATH", "")]))
    sandbox.reset_detection()
    yield request.param
    sandbox.reset_detection()


@pytest.mark.parametrize("mode", MODES, indirect=True)
def test_the_round_three_attacks_are_refused(tmp_path, mode):
    listener = Listener()
    seen = outcomes(probe(tmp_path, attack_code(listener.port, os.getpid())))
    shown = "; ".join(f"{name}: {what}" for name, what in seen.items())  # in full, not a truncated dict
    assert not listener.reached(), shown
    assert set(seen) == set(ATTACKS), shown
    escaped = [name for name, what in seen.items() if what == "done"]
    assert escaped == ([] if mode == "bubblewrap" else list(OS_WALL_ONLY)), shown


def test_the_round_three_attacks_work_where_nothing_stops_them(tmp_path):
    """The control: plain Python, no hooks; every attack gets through (the judge here is this test's process)."""
    listener = Listener()
    code = attack_code(listener.port, os.getpid()) + "print('SEEN<' + seen + '>SEEN')"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, MARKER: "secret", "TORCH_CPP_LOG_LEVEL": "ERROR"})
    assert "SEEN<" in done.stdout, done.stdout + done.stderr
    seen = outcomes(done.stdout.split("SEEN<")[1].split(">SEEN")[0])
    reached = listener.reached()
    assert seen.pop("torch's TCPStore") != "done" and reached, seen  # it connected, then found no store there
    assert all(what == "done" for what in seen.values()), seen


# ---------------------------------------------------------------- the judge's side

def test_a_judge_that_is_not_dumpable_keeps_its_environment_and_pipes():
    """housekeeping.nondumpable, as the judge of a class calls it: another process of the same user can no longer
    read its /proc/<pid>/environ or reach its pipes through /proc/<pid>/fd/ (the control: the same two reads before
    the call). As root, both run without capabilities (with CAP_SYS_PTRACE the reader would read anything; a
    target that holds capabilities the reader lacks is closed to it anyway)."""
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root without setpriv: the reader would keep CAP_SYS_PTRACE")
    plain = ["setpriv", "--bounding-set=-all", "--inh-caps=-all"] if os.geteuid() == 0 else []
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from grading.worker.housekeeping import nondumpable
        print('ready', flush=True)
        sys.stdin.readline()
        nondumpable()
        print('locked', flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen(plain + [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True,
                            env={**os.environ, MARKER: "secret"})

    def reads() -> list[str]:
        return [subprocess.run(plain + cmd, capture_output=True, text=True).stdout
                for cmd in (["cat", f"/proc/{proc.pid}/environ"], ["readlink", f"/proc/{proc.pid}/fd/0"])]

    try:
        assert proc.stdout.readline().strip() == "ready"
        environ, fds = reads()
        assert MARKER in environ and fds.startswith("pipe:"), (environ, fds)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "locked"
        assert reads() == ["", ""]
    finally:
        proc.kill()
        proc.wait()


def test_the_judge_names_its_own_files_that_changed(tmp_path):
    """integrity: a copy of the judge's files, one check rewritten, one file planted: both named, fail closed."""
    for top in integrity.WATCHED:
        src = REPO / top
        if src.is_file():
            (tmp_path / top).write_bytes(src.read_bytes())
        elif src.is_dir():
            subprocess.run(["cp", "-r", str(src), str(tmp_path / top)], check=True)
    before = integrity.snapshot(tmp_path)
    assert "grading/checks/ch01_embeddings/named_cases.py" in before and "judge.py" in before
    assert integrity.verify(before, tmp_path) == before  # nothing changed: the snapshot comes back
    check = tmp_path / "grading" / "checks" / "ch01_embeddings" / "named_cases.py"
    check.write_text(check.read_text() + "\nPASS_EVERYTHING = True\n")
    (tmp_path / "grading" / "sitecustomize.py").write_text("import os\n")
    with pytest.raises(integrity.Tampered) as err:
        integrity.verify(before, tmp_path)
    assert "grading/checks/ch01_embeddings/named_cases.py" in str(err.value) and "grading/sitecustomize.py" in str(err.value)
    state = tmp_path / "grades-results.json"
    integrity.record(state, before)  # the last class ended with the files as they were
    with pytest.raises(integrity.Tampered, match="since the last class"):
        integrity.check_since_last_class(state, tmp_path)


def test_the_guard_refuses_what_it_cannot_resolve(tmp_path):
    """The resolver itself: a path past PATH_MAX is refused, not taken as written."""
    with pytest.raises(guard.Refused):
        guard._realpath_posix(str(tmp_path) + ("/" + "d" * 250) * 20 + "/f")


PLANT = """
import torch
torch.save({{}}, {target!r})  # native code writes the file by name: the hooks do not see it
"""


def test_a_class_whose_judge_files_changed_gets_no_grades(tmp_path):
    """Hooks only (--trusted-class): a student's torch.save rewrites a file in grading/, which only an OS wall stops.
    The judge compares its files after the class, names the file, withdraws every grade of the run (the gradebook
    written as the class went says why) and exits 2; the next class
    on the same gradebook would be refused too (test_the_judge_names_its_own_files_that_changed)."""
    planted = REPO / "grading" / f"planted-{os.getpid()}-{tmp_path.name}.pt"
    answer = (SOLUTION.read_text(encoding="utf-8") if SOLUTION.exists() else pytest.skip("a hand-out: no answers"))
    (tmp_path / "class" / "mallory").mkdir(parents=True)
    (tmp_path / "class" / "mallory" / "ch01_embeddings.py").write_text(answer + PLANT.format(target=str(planted)))
    try:
        done = subprocess.run([sys.executable, str(REPO / "judge.py"), "--class", str(tmp_path / "class"),
                               "embedding_backward", "--trusted-class", "--gradebook", str(tmp_path / "grades.csv")],
                              cwd=REPO, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "HF_HUB_OFFLINE": "1", "GRADING_SANDBOX": "none"})
        assert planted.exists(), done.stdout + done.stderr  # the control: the write got through the hooks
    finally:
        planted.unlink(missing_ok=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "The judge's own files changed" in done.stdout and planted.name in done.stdout, done.stdout
    book = (tmp_path / "grades.csv").read_text(encoding="utf-8")  # written as the class went, then withdrawn
    assert "mallory" in book and "not graded" in book and "The judge's own files changed" in book, book


def test_a_path_climbing_from_inside_the_scratch_folder_is_refused(tmp_path):
    """'..' after a part inside the scratch folder is refused: between the hook's resolution and the open a thread
    could swap a link there (from a deep folder to the scratch folder itself) and the OS would climb out.
    '..' elsewhere in a full path (an installed package's data) is left to the rest of the rules."""
    scratch = tmp_path / "scratch"
    (scratch / "a" / "b").mkdir(parents=True)
    (scratch / "l").symlink_to(scratch / "a" / "b")
    climbs = [str(scratch / "l" / ".." / ".." / "x"), str(scratch / "a" / ".." / "f"), "a/../f", "../x"]
    for path in climbs:
        assert guard._climbs(path, str(scratch)), path
    for path in [str(scratch / "a" / "b" / "f"), str(tmp_path / "other" / ".." / "scratch"), "a/b", None]:
        assert not guard._climbs(path, str(scratch)), path
