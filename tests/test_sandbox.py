"""The judge is safe with strangers' code: hostile submissions stay in their scratch folder, reach no network,
start nothing, see no answers, and get named non-passes; every other submission is graded untouched."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from answers import solution_source
from grading import i18n, model
from grading.engine import sandbox, scheduler

REPO = Path(__file__).resolve().parent.parent
SOLUTION = solution_source("ch01_embeddings")  # every test here grades it; a hand-out has none: skip there
NO_MODEL = "embedding_backward"  # a chapter 01 exercise whose cases do not load the course model
BWRAP = sandbox.detect().is_os_level
needs_bwrap = pytest.mark.skipif(not BWRAP, reason=f"no OS sandbox here: {sandbox.detect()}")


def student(folder: Path, body: str) -> Path:
    """`folder`/exercises/ch01_embeddings.py = the reference solution followed by `body`."""
    ex = folder / "exercises"
    ex.mkdir(parents=True, exist_ok=True)
    (ex / "ch01_embeddings.py").write_text(SOLUTION + "\n" + textwrap.dedent(body), encoding="utf-8")
    return ex


def grade_one(folder: Path, **kw) -> model.ExerciseResult:
    """The result, checked to reach a Chinese reader entirely from the catalog, then in English."""
    r = scheduler.grade(folder, NO_MODEL, lang=i18n.MARKED, **kw)[0]
    if i18n.has_catalog("ch01_embeddings"):  # the chapter's own catalog is written (tools/messages.py)
        assert i18n.untranslated(r, "zh") == [], i18n.untranslated(r, "zh")
    return i18n.localize(r, "en")


def probe(tmp_path: Path, code: str) -> str:
    """Run `code` (which sets `seen`, a string) inside embedding_backward; what it saw comes back in the
    error message, the only way out of the sandbox."""
    body = "def embedding_backward(grad_out, ids, vocab_size):\n    seen = ''\n" + textwrap.indent(
        textwrap.dedent(code), "    ") + "\n    raise RuntimeError('PRO' + 'BE<' + str(seen) + '>PRO' + 'BE')\n"
    r = grade_one(student(tmp_path, body))
    assert r.status == model.ERROR, r
    found = re.search(r"PROBE<(.*)>PROBE", r.cases[0].message, re.S)
    assert found, r.cases[0].message
    return found.group(1)


def attempt(expr: str) -> str:
    """Code for probe(): try `expr`, record 'ok' or the exception's type."""
    return textwrap.dedent(f"""
        try:
            {expr}
            seen += 'ok;'
        except BaseException as e:
            seen += type(e).__name__ + ';'
    """)


# ---------------------------------------------------------------- the tampering student of issue 13, attack by attack
# Each layer alone and both together; the control shows the attacks work where nothing stops them.

ATTACKS = {  # each tried on its own, so that one refusal hides none of the others
    "write in /tmp": "open({tmp!r}, 'w').write('pwned')",
    "write in the home folder": "open({home!r}, 'w').write('pwned')",
    "connect to the teacher's machine": "socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')",
    "overwrite another student's file": "open({victim!r}, 'w').write('def embedding_backward(*a):\\n    return None\\n')",
}


class Tampering:
    """A class folder with a victim, targets on the teacher's machine, and the attacker's code that aims at them."""

    def __init__(self, tmp_path: Path):
        self.klass = tmp_path / "class"
        self.victim = student(self.klass / "victim", "")
        self.victim_file = self.victim / "ch01_embeddings.py"
        self.before = self.victim_file.read_bytes()
        tag = f"{os.getpid()}-{tmp_path.name}"
        self.tmp_marker = Path("/tmp") / f"judge-pwned-{tag}"
        self.home_marker = Path.home() / f".judge-pwned-{tag}"
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(5)
        self.listener.setblocking(False)

    def code(self) -> str:
        """Every attack in its own try; the outcomes are raised at the end, so the attacker never passes."""
        targets = dict(tmp=str(self.tmp_marker), home=str(self.home_marker), victim=str(self.victim_file),
                       port=self.listener.getsockname()[1])
        lines = ["import socket", "_outcomes = []"]
        for name, statement in ATTACKS.items():
            lines += ["try:", f"    {statement.format(**targets)}", f"    _outcomes.append({name!r} + ': done')",
                      "except BaseException as e:", f"    _outcomes.append({name!r} + f': {{type(e).__name__}}: {{e}}')"]
        lines.append("raise RuntimeError('ATTACKS<' + ' | '.join(_outcomes) + '>ATTACKS')")
        return "\n".join(lines) + "\n"

    def harm(self) -> list[str]:
        """The attacks that reached the teacher's machine (and the clean-up of what they left)."""
        harm = []
        for name, marker in (("write in /tmp", self.tmp_marker), ("write in the home folder", self.home_marker)):
            if marker.exists():
                harm.append(name)
                marker.unlink()
        try:
            self.listener.accept()[0].close()
            harm.append("connect to the teacher's machine")
        except BlockingIOError:
            pass
        finally:
            self.listener.close()
        if self.victim_file.read_bytes() != self.before:
            harm.append("overwrite another student's file")
        return harm


def outcomes(result) -> dict[str, str]:
    """What each attack met inside the sandbox, from the attacker's error message."""
    found = re.findall(r"ATTACKS<(.*?)>ATTACKS", result.cases[0].message, re.S)
    assert found, result.cases[0].message
    return dict(item.split(": ", 1) for item in found[-1].split(" | "))


def test_the_tampering_attacks_work_where_nothing_stops_them(tmp_path):
    """The control: run as plain Python, each attack reaches its target, so the tests below can fail."""
    scene = Tampering(tmp_path)
    done = subprocess.run([sys.executable, "-c", scene.code()], capture_output=True, text=True, timeout=60)
    assert "ATTACKS<" in done.stderr, done.stderr
    assert scene.harm() == list(ATTACKS), done.stderr


def test_tampering_student_harms_nobody_and_gets_a_named_non_pass(tmp_path):
    """Both layers (bubblewrap where it runs, and the audit hooks), through the judge, attacker graded first."""
    scene = Tampering(tmp_path)
    attacker = student(scene.klass / "attacker", scene.code())
    results = scheduler.grade_many([attacker, scene.victim], NO_MODEL, blocked_extra=[scene.klass])
    attacker_result, victim_result = results[0][0], results[1][0]
    assert scene.harm() == []
    seen = outcomes(attacker_result)
    assert set(seen) == set(ATTACKS), seen
    assert not [name for name, what in seen.items() if what == "done" and name != "write in /tmp"], seen
    assert victim_result.status == model.PASSED
    assert attacker_result.status == model.ERROR and "Importing ch01_embeddings.py failed" in attacker_result.cases[0].message
    assert attacker_result.isolation == victim_result.isolation == sandbox.detect().name


@needs_bwrap
def test_bubblewrap_alone_contains_every_attack(tmp_path):
    """The attacker's code in the judge's bubblewrap command line, without the audit hooks."""
    scene = Tampering(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": str(REPO)}
    done = subprocess.run(sandbox.bwrap_command([sys.executable, "-c", scene.code()], env=env),
                          capture_output=True, text=True, timeout=120)
    assert "ATTACKS<" in done.stderr, done.stderr
    assert scene.harm() == [], done.stderr


def test_the_audit_hooks_alone_refuse_every_attack(tmp_path, monkeypatch):
    """GRADING_SANDBOX=none: the hooks are the only layer; each attack is refused by them, not by the OS."""
    monkeypatch.setenv("GRADING_SANDBOX", "none")
    sandbox.reset_detection()
    try:
        scene = Tampering(tmp_path)
        attacker = student(scene.klass / "attacker", scene.code())
        result = scheduler.grade_many([attacker], NO_MODEL, blocked_extra=[scene.klass])[0][0]
        assert scene.harm() == []
        seen = outcomes(result)
        assert set(seen) == set(ATTACKS) and all(what.startswith("Refused: ") for what in seen.values()), seen
        assert result.isolation == sandbox.AUDIT
    finally:
        sandbox.reset_detection()


@needs_bwrap
def test_dev_is_read_only_and_dev_shm_is_bounded_inside_bubblewrap(tmp_path):
    """/dev and /dev/shm are memory: native code (torch.save given a path) writes there past the hooks, so
    bubblewrap itself must bound them: /dev read-only, /dev/shm a small tmpfs of its own."""
    mb = sandbox.DEV_SHM_MB + 16
    script = textwrap.dedent(f"""
        for d in /dev /dev/shm; do
          dd if=/dev/zero of=$d/fill bs=1M count={mb} 2>/dev/null
          echo $(( $(stat -c %s $d/fill 2>/dev/null || echo 0) / 1048576 ))
        done
        echo x > /dev/null && echo null-writable
    """)
    done = subprocess.run(sandbox.bwrap_command(["/bin/sh", "-c", script], python=False), capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.split() == ["0", str(sandbox.DEV_SHM_MB), "null-writable"], done.stdout + done.stderr


# ---------------------------------------------------------------- what learner code can see and change

def test_no_reading_system_secrets_or_the_answers(tmp_path):
    targets = ["/etc/passwd", str(Path.home() / ".ssh" / "id_rsa"), str(REPO / "solutions" / "ch01_embeddings.py"),
               str(REPO / "grading" / "checks" / "ch01_embeddings" / "named_cases.py"), str(REPO / ".git" / "HEAD"), str(REPO / "judge.py")]
    if not BWRAP:  # the audit hooks refuse the answers, the judge's folders and ~/.ssh; the system's files and
        targets = targets[1:-1]  # judge.py itself are hidden only by bubblewrap (the README's platform table)
    code = "".join(attempt(f"open({t!r}).read()") for t in targets)
    code += attempt(f"os.listdir({str(REPO / '.git')!r})") + attempt(f"os.listdir({str(REPO / 'solutions')!r})")
    seen = probe(tmp_path, "import os\n" + code).split(";")[:-1]
    assert "ok" not in seen, dict(zip(targets + [".git listing", "solutions listing"], seen))
    assert len(seen) == len(targets) + 2


@needs_bwrap  # the fallback refuses the class folder when it grades a class (--class), not one folder alone
def test_no_listing_or_reading_another_students_folder(tmp_path):
    klass = tmp_path / "class"
    other = student(klass / "other", "SECRET = 'the other student'\n")
    seen = probe(klass / "nosy", "import os\n" + attempt(f"os.listdir({str(other)!r})")
                 + attempt(f"open({str(other / 'ch01_embeddings.py')!r}).read()")
                 + attempt(f"os.listdir({str(klass)!r})"))
    assert seen.count(";") == 3 and "ok" not in seen.split(";"), seen


def test_no_writes_outside_the_scratch_folder(tmp_path):
    outside = tmp_path / "outside.txt"
    seen = probe(tmp_path, attempt(f"open({str(outside)!r}, 'w').write('x')")
                 + attempt(f"open({str(REPO / 'exercises' / 'ch01_embeddings.py')!r}, 'a').write('#')")
                 + attempt("open('scratch.txt', 'w').write('fine')"))
    assert "ok" not in seen.split(";")[:2], seen
    assert seen.split(";")[2] == "ok", seen  # the learner's own scratch folder is writable
    assert not outside.exists()
    assert "#" not in (REPO / "exercises" / "ch01_embeddings.py").read_text()[-3:]


def test_the_students_own_folder_is_never_written(tmp_path):
    folder = student(tmp_path, "open(__file__, 'a').write('# graded')\n")
    snapshot = {p.name: p.read_bytes() for p in folder.iterdir()}
    grade_one(folder)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == snapshot


def test_no_network(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        seen = probe(tmp_path, "import socket\n" + attempt(f"socket.create_connection(('127.0.0.1', {port}), timeout=2)")
                     + attempt("socket.getaddrinfo('pypi.org', 443)"))
    finally:
        listener.close()
    assert "ok" not in seen.split(";")


def test_no_new_processes(tmp_path):
    seen = probe(tmp_path, "import os, subprocess, ctypes\n" + attempt("subprocess.run(['true'])")
                 + attempt("os.system('true')") + attempt("os.fork()") + attempt("os.posix_spawn('/bin/true', ['true'], {})")
                 + attempt("ctypes.CDLL(None).fork()") + attempt("ctypes.CDLL('libc.so.6')")
                 + attempt("import _posixsubprocess; _posixsubprocess.fork_exec()")
                 + attempt("os.kill(os.getppid(), 9)")  # the warm worker
                 + attempt("import resource; resource.setrlimit(resource.RLIMIT_AS, (-1, -1))"))
    assert seen.count(";") == 9 and "ok" not in seen.split(";"), seen


def test_fork_bomb_is_a_named_error(tmp_path):
    r = grade_one(student(tmp_path, """
        import os
        def embedding_backward(grad_out, ids, vocab_size):
            while True:
                os.fork()
    """))
    # where Python has no fork (Windows, and the no-fork CI step) the learner's os.fork is simply missing
    assert r.status == model.ERROR and any(why in r.cases[0].message for why in (
        "Starting other programs is not allowed", "has no attribute 'fork'")), r.cases[0].message


def test_thread_bomb_hits_the_thread_limit(tmp_path):
    seen = probe(tmp_path, """
        import threading, time
        started = 0
        try:
            for _ in range(200):
                threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
                started += 1
        except (RuntimeError, PermissionError) as e:
            seen = f'stopped after {started}: {e}'
    """)
    assert seen.startswith("stopped after") and int(seen.split()[2].rstrip(":")) <= 8, seen


def test_disk_filler_is_stopped(tmp_path):
    seen = probe(tmp_path, """
        try:
            with open('big.bin', 'wb') as f:
                for _ in range(200):  # 2 GB in 10 MB blocks
                    f.write(b'x' * 10_000_000)
            seen = 'wrote 2 GB'
        except OSError as e:
            seen = f'{type(e).__name__}: {e.strerror}'
    """)
    assert "File too large" in seen or "No space" in seen, seen


@needs_bwrap
def test_many_file_disk_filler_is_bounded_by_the_scratch_size(tmp_path):
    seen = probe(tmp_path, """
        n = 0
        try:
            for i in range(100):  # 100 files of 60 MB = 6 GB
                with open(f'part{i}.bin', 'wb') as f:
                    for _ in range(6):
                        f.write(b'x' * 10_000_000)
                n += 1
            seen = 'wrote 6 GB'
        except OSError as e:
            seen = f'{n} files, {e.strerror}'
    """)
    assert "No space" in seen and int(seen.split()[0]) < 12, seen


def test_a_gigabyte_of_printing_is_stopped_with_a_named_error(tmp_path):
    r = grade_one(student(tmp_path, """
        import sys
        def embedding_backward(grad_out, ids, vocab_size):
            line = 'x' * (1 << 20)
            for _ in range(1024):
                sys.stdout.write(line)
            return None
    """))
    assert r.status == model.ERROR and "printed more than" in r.cases[0].message


# ---------------------------------------------------------------- the ways in of issue 13

def test_no_check_or_reference_code_in_the_learners_process(tmp_path):
    seen = probe(tmp_path, """
        import sys, gc
        seen = ','.join(sorted(m for m in sys.modules if m.startswith('grading.') and m != 'grading.worker'
                               and not m.startswith('grading.worker.') and m != 'grading.i18n'))  # marks only
        frame, names = sys._getframe(), []
        while frame is not None:
            names += [k for k, v in frame.f_globals.items() if 'reference' in k.lower() or k == 'CHAPTER']
            names += [type(v).__name__ for v in frame.f_locals.values() if type(v).__name__ in ('Case', 'Exercise', 'Checker')]
            frame = frame.f_back
        seen += '|' + ','.join(names)
        try:
            gc.get_objects()
            seen += '|gc ok'
        except PermissionError:
            seen += '|gc refused'
    """)
    assert seen == "||gc refused", seen


def test_swapping_the_call_protocols_changes_nothing(tmp_path):
    r = grade_one(student(tmp_path, """
        import grading.worker.calls as P
        P.PROTOCOLS['call'] = lambda fn, inputs: P.PROTOCOLS  # would send back something else
        P.call.__code__ = (lambda fn, inputs: None).__code__
        def embedding_backward(grad_out, ids, vocab_size):
            return torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
    """))
    assert r.status == model.ERROR and "not allowed" in r.cases[0].message  # the __code__ swap is refused
    r = grade_one(student(tmp_path, """
        import grading.worker.calls as P
        P.PROTOCOLS['call'] = lambda fn, inputs: 'forged'
        def embedding_backward(grad_out, ids, vocab_size):
            return torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
    """))
    assert r.status == model.WRONG and "forged" not in r.cases[0].message  # the real protocol ran


def test_forged_frames_on_the_result_pipe_are_not_trusted(tmp_path):
    r = grade_one(student(tmp_path, """
        import os, struct
        for fd in range(3, 64):
            try:
                os.write(fd, struct.pack('>BQ', 14, 5) + b'forge')  # a RESULT frame out of turn
            except OSError:
                pass
    """))
    assert r.status == model.ERROR and "out of order" in r.cases[0].message


def test_forged_result_files_and_exit_are_not_a_pass(tmp_path):
    r = grade_one(student(tmp_path, """
        import os, torch
        torch.save([{'name': 'x', 'output': 1}], 'embedding_backward.pt')
        os._exit(0)
    """))
    assert r.status == model.ERROR and "ended while importing" in r.cases[0].message


# A native extension module is the one way past the audit hooks (the learner's file may write one into its
# scratch folder and import it). Inside bubblewrap it is contained; what is left is a process it leaves behind.
STRAY_C = r"""
#include <Python.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "stray", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_stray(void) {
    if (fork() == 0) {          /* a daemon in its own session: it outlives the child that started it */
        setsid();
        for (int fd = 0; fd < 1024; fd++) close(fd);   /* let the worker see its child finish */
        pid_t me = getpid();
        for (int i = 0; i < 60000; i++) {   /* a minute or more: kill every process started after it */
            DIR *d = opendir("/proc");
            struct dirent *e;
            while (d && (e = readdir(d))) {
                int pid = atoi(e->d_name);
                if (pid > me) kill(pid, SIGKILL);
            }
            if (d) closedir(d);
            usleep(1000);
        }
        _exit(0);
    }
    return PyModule_Create(&def);
}
"""


def _compiled_stray(tmp_path: Path) -> bytes:
    import sysconfig

    gcc = shutil.which("gcc")
    include = sysconfig.get_paths()["include"]
    if not gcc or not (Path(include) / "Python.h").exists():
        pytest.skip("needs gcc and Python's headers to build the hostile extension module")
    (tmp_path / "stray.c").write_text(STRAY_C)
    out = tmp_path / "stray.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", f"-I{include}", str(tmp_path / "stray.c"), "-o", str(out)],
                   check=True, capture_output=True)
    return out.read_bytes()


@pytest.mark.parametrize("suffix", ["importlib.machinery.EXTENSION_SUFFIXES[0]", "'.bin'"])
def test_a_compiled_extension_written_by_the_learner_is_refused(tmp_path, suffix):
    """The file writes a compiled extension (its PyInit leaves a daemon that kills every later process) into
    its scratch folder and imports it: loading native code from anywhere but the installed packages is refused,
    and the next student, graded by the same worker, is untouched."""
    import base64

    blob = base64.b64encode(_compiled_stray(tmp_path))
    attacker = student(tmp_path / "attacker", f"""
        import base64, importlib.machinery, importlib.util, os
        _path = os.path.join(os.getcwd(), "stray" + {suffix})
        with open(_path, "wb") as _f:
            _f.write(base64.b64decode({blob!r}))
        _loader = importlib.machinery.ExtensionFileLoader("stray", _path)  # whatever the file is called
        _spec = importlib.util.spec_from_file_location("stray", _path, loader=_loader)
        _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
    """)
    victim = student(tmp_path / "victim", "")
    attacked, graded = scheduler.grade_many([attacker, victim], "01", workers=1)
    assert not any(r.passed for r in attacked)
    assert "Loading the compiled module" in attacked[0].message and "not allowed" in attacked[0].message
    assert all(r.passed for r in graded), [(r.name, r.status, r.message[:200]) for r in graded if not r.passed]


@needs_bwrap
def test_the_worker_kills_what_a_child_left_behind(tmp_path):
    """Should native code get past the hooks anyway, a daemon it leaves (own session, reparented to the sandbox's
    init) is killed by the worker before the next child: grading.worker.housekeeping.kill_strays, run where the worker runs."""
    script = textwrap.dedent("""
        import os, subprocess, time
        from grading.worker import housekeeping as warm
        subprocess.run(["sh", "-c", "setsid sleep 60 &"], check=True)  # orphaned at once, in its own session
        time.sleep(0.2)
        def others():
            spare = {1, os.getpid(), os.getppid()}
            return [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in spare
                    and open(f"/proc/{p}/stat").read().split()[2] != "Z"]
        before = len(others())
        warm.kill_strays()
        time.sleep(0.2)
        print(before, len(others()))
    """)
    env = {"GRADING_IN_BWRAP": "1", "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(sandbox.bwrap_command([sys.executable, "-c", script], env=env), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"], done.stdout


@needs_bwrap
def test_the_worker_empties_its_scratch_root_but_not_what_is_mounted_there(tmp_path):
    """Between learner processes the worker removes everything in its scratch root (/tmp inside bubblewrap); a
    course checked out under /tmp is mounted there (read-only), and walking it, .venv and all, for files it could
    not delete cost 0.3 s per learner process. What is mounted there is left alone (here a writable bind, so a walk
    would show), and a learner's leftovers go however deep they are: the audit hooks allow 64 new folders, but
    native code past them is bounded only by the tmpfs, and a tree deeper than the recursion limit made the old
    recursive removal (shutil.rmtree) die, and the worker with it, before the next student."""
    course = tmp_path / "course"
    (course / "grading").mkdir(parents=True)
    (course / "grading" / "checks.py").write_text("# the judge's own file\n")
    script = textwrap.dedent("""
        import os
        from grading.worker import housekeeping as warm
        before = set(os.listdir("/tmp"))  # the mounts: /tmp/course, and the course itself where it is under /tmp
        os.mkdir("/tmp/left")
        os.chdir("/tmp/left")
        for _ in range(2100):  # deeper than Python's recursion limit, longer than PATH_MAX
            os.mkdir("d")
            os.chdir("d")
        open("f", "w").write("x")
        os.chdir("/tmp")
        open("/tmp/course/note", "w").write("a learner's file in the folder that holds the mount")
        os.symlink("/tmp/course/grading", "/tmp/link")
        os.mkdir("/tmp/kept")
        warm.clean_tmp("/tmp", keep="/tmp/kept")
        after = set(os.listdir("/tmp"))
        print(sorted(after - before), before <= after, sorted(os.listdir("/tmp/course")), os.listdir("/tmp/course/grading"))
    """)
    env = {"GRADING_IN_BWRAP": "1", "PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    cmd = sandbox.bwrap_command([sys.executable, "-c", script], env=env)
    at = cmd.index("--")
    cmd[at:at] = ["--dir", "/tmp/course", "--bind", str(course / "grading"), "/tmp/course/grading"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['kept']", "True", "['grading']", "['checks.py']"], done.stdout
    assert (course / "grading" / "checks.py").exists()


@pytest.mark.parametrize("fd_walk", [True, False], ids=["descriptors", "as-on-windows"])
def test_the_scratch_root_is_emptied_but_the_kept_folder(tmp_path, monkeypatch, fd_walk):
    """Outside bubblewrap too (the scratch root is a folder of the worker's), on both ways of walking it."""
    from grading.worker import housekeeping

    if fd_walk and not housekeeping.FD_WALK:
        pytest.skip("no folder descriptors here")
    monkeypatch.setattr(housekeeping, "FD_WALK", fd_walk)
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    (root / "file").write_text("x")
    (root / "kept").mkdir()
    (root / "kept" / "g").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "h").write_text("x")
    try:
        (root / "link").symlink_to(outside, target_is_directory=True)
    except OSError:  # Windows without the right to make links
        pass
    housekeeping.clean_tmp(str(root) + os.sep, keep=str(root / "kept"))
    assert sorted(p.name for p in root.iterdir()) == ["kept"]
    assert (root / "kept" / "g").exists() and (outside / "h").exists()


# ---------------------------------------------------------------- the sandbox itself

@needs_bwrap
def test_bwrap_works_without_root(tmp_path):
    """The same bubblewrap arguments, run by an unprivileged user (nobody) with the system Python."""
    if os.geteuid() != 0 or not shutil.which("setpriv") or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root (to become nobody), setpriv and /usr/bin/python3")
    script = textwrap.dedent("""
        import os, socket
        out = []
        for path in ('/etc/passwd', '/root', %r):
            out.append(os.path.exists(path))
        open('/tmp/scratch.txt', 'w').write('ok')
        try:
            socket.create_connection(('1.1.1.1', 53), timeout=2); out.append('net')
        except OSError:
            out.append('no net')
        print(os.getuid(), out)
    """ % str(REPO))
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
           *sandbox.bwrap_command(["/usr/bin/python3", "-c", script], python=False)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "65534 [False, False, False, 'no net']", done.stdout


@needs_bwrap
def test_when_bwrap_cannot_start_the_judge_falls_back_and_says_so(tmp_path):
    """Root with every capability dropped cannot map its uid in a user namespace, so bwrap fails: the judge
    must notice, grade with the audit-hook guards, and say which isolation was in force."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv")
    folder = student(tmp_path, "")
    done = subprocess.run(["setpriv", "--inh-caps=-all", "--bounding-set=-all", sys.executable, str(REPO / "judge.py"),
                           NO_MODEL, "--source", str(folder)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Learner code runs in: audit hooks (bwrap failed here" in done.stdout


def test_fallback_guards_without_bubblewrap(tmp_path, monkeypatch):
    """GRADING_SANDBOX=none: the audit-hook fallback still refuses writes outside scratch, sockets, processes
    and the answers, and says which isolation was in force."""
    monkeypatch.setenv("GRADING_SANDBOX", "none")
    sandbox.reset_detection()
    try:
        outside = tmp_path / "outside.txt"
        seen = probe(tmp_path, "import os, socket, subprocess\n"
                     + attempt(f"open({str(outside)!r}, 'w')") + attempt(f"os.remove({str(REPO / 'judge.py')!r})")
                     + attempt("socket.socket()") + attempt("subprocess.run(['true'])")
                     + attempt(f"open({str(REPO / 'solutions' / 'ch01_embeddings.py')!r})")
                     + attempt(f"open({str(REPO / '.git' / 'HEAD')!r})")
                     + attempt("open('scratch.txt', 'w').write('fine')"))
        assert seen.split(";")[:-1] == ["Refused"] * 6 + ["ok"], seen
        assert not outside.exists()
        r = grade_one(student(tmp_path / "b", ""))
        assert r.passed and r.isolation == sandbox.AUDIT
    finally:
        sandbox.reset_detection()


def test_fallback_bounds_disk_use(tmp_path, monkeypatch):
    """Without bubblewrap the scratch folder is on the real disk: files are capped at 16 MB and a child may create at
    most 64 files, folders or links, every rename counted (moving a folder away does not free its names); sqlite
    may not write outside the scratch folder either."""
    monkeypatch.setenv("GRADING_SANDBOX", "none")
    sandbox.reset_detection()
    outside = tmp_path / "outside.db"
    try:
        seen = probe(tmp_path, f"""
            import os, sqlite3
            try:
                with open('big.bin', 'wb') as f:
                    for _ in range(3):
                        f.write(b'x' * 10_000_000)
                seen += 'wrote 30 MB; '
            except OSError as e:
                seen += f'{{e.strerror}}; '
            try:
                sqlite3.connect({str(outside)!r}).execute('create table t (x)')
                seen += 'sqlite wrote outside; '
            except PermissionError:
                seen += 'sqlite refused; '
            n = 0
            try:
                os.mkdir('e')
                for i in range(200):  # a new folder each time, the old ones moved inside it
                    os.mkdir('d')
                    with open('d/x.bin', 'wb') as f:
                        f.write(b'x' * 1000)
                    os.rename('e', 'd/e')
                    os.rename('d', 'e')
                    n += 1
            except PermissionError:
                seen += f'{{n}} rounds, then refused'
        """)
        big, sqlite, rounds = seen.split("; ")
        assert big == "File too large" and sqlite == "sqlite refused" and not outside.exists(), seen
        assert rounds.endswith(" rounds, then refused") and 5 < int(rounds.split()[0]) < 20, seen
    finally:
        sandbox.reset_detection()


def test_a_worker_that_cannot_start_is_a_named_error_not_a_crash(tmp_path, monkeypatch):
    from grading.engine import worker_pool as workers

    def broken(*_a, **_k):
        raise workers.WorkerFailed("simulated: bwrap refused to start")

    monkeypatch.setattr(workers, "warm_worker", broken)
    r = grade_one(student(tmp_path, ""))
    assert r.status == model.ERROR and "could not start" in r.cases[0].message
