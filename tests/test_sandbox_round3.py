"""Round three of hostile submissions (issue 38), judge side: one student's results cannot make the judge allocate,
digest or check without bound, a stalled or interrupted class still leaves every student's row, and a request the
worker never gets whole costs seconds. Each attack runs in every mode it applies to: bubblewrap (where it runs),
the audit hooks alone (GRADING_SANDBOX=none) and the spawn backend."""
from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
import torch

from answers import solution_source
from grading import i18n, model
from grading.catalog import load_chapters, select
from grading.engine import checker as checker_mod
from grading.engine import sandbox, scheduler, worker_pool
from grading.worker import limits, wire

REPO = Path(__file__).resolve().parent.parent
SOLUTION = solution_source("ch01_embeddings")  # a hand-out has none: the class tests skip there
EXERCISE = "embedding_backward"  # a chapter 01 exercise whose cases do not load the course model
BWRAP = sandbox.detect().is_os_level
MODES = ["bubblewrap", "hooks", "spawn"]


@pytest.fixture(scope="module", params=MODES)
def mode(request):
    """Each mode in turn: bubblewrap + hooks (forked), the hooks alone (forked), the spawn backend."""
    if request.param == "bubblewrap" and not BWRAP:
        pytest.skip(f"no OS sandbox here: {sandbox.detect()}")
    with pytest.MonkeyPatch.context() as mp:
        if request.param == "hooks":
            mp.setenv("GRADING_SANDBOX", "none")
        if request.param == "spawn":
            mp.setenv("GRADING_BACKEND", "spawn")
        sandbox.reset_detection()
        yield request.param
    sandbox.reset_detection()


def plan():
    chapter, exercises = select(load_chapters(), EXERCISE)[0]
    return chapter, exercises[0]


def student(folder: Path, body: str) -> Path:
    ex = folder / "exercises"
    ex.mkdir(parents=True, exist_ok=True)
    (ex / "ch01_embeddings.py").write_text(SOLUTION + "\n" + textwrap.dedent(body), encoding="utf-8")
    return ex


def forged_frames(output: str) -> str:
    """Learner code that writes a whole, in-order batch of frames for embedding_backward itself, every case's
    output being `output` (an expression), then leaves before the real process could write anything."""
    names = [c.name for c in plan()[1].cases]
    return textwrap.dedent(f"""
        import io, os, stat, struct, torch
        def _frame(fd, kind, body=b''):
            os.write(fd, struct.pack('>BQ', kind, len(body)) + body)
        _out = {output}
        _buf = io.BytesIO()
        torch.save([{{'name': n, 'output': _out, 'seconds': 0.0}} for n in {names!r}], _buf)
        for _fd in range(3, 256):
            try:
                if stat.S_ISFIFO(os.fstat(_fd).st_mode) and os.fstat(_fd).st_ino != os.fstat(1).st_ino:
                    _frame(_fd, {wire.IMPORTED})
                    _frame(_fd, {wire.STARTED}, {EXERCISE!r}.encode())
                    _frame(_fd, {wire.RESULT}, _buf.getvalue())
                    _frame(_fd, {wire.DONE})
                    os._exit(0)
            except OSError:
                pass
    """)


# ---------------------------------------------------------------- bounded judge-side work

def test_one_storage_referenced_2000_times_is_digested_once(tmp_path):
    """64 MB viewed 2,000 times (the same layout): measured and digested once, checked in seconds."""
    chapter, ex = plan()
    big = torch.zeros(16 << 20)
    raw = [{"name": c.name, "output": [big.view(-1) for _ in range(2000)], "seconds": 0.0} for c in ex.cases]
    got: list = []
    thread = threading.Thread(target=lambda: got.append(checker_mod.Checker().grade(chapter, ex, raw)), daemon=True)
    start = time.perf_counter()
    thread.start()
    thread.join(60)
    assert got, f"checking 64 MB referenced 2,000 times did not end in {time.perf_counter() - start:.0f} s"
    assert got[0].status in (model.WRONG, model.ERROR)
    assert checker_mod.measure(raw)[0] == 64 << 20  # every view is the same layout: counted once


def test_views_that_add_up_past_the_bound_are_a_named_non_pass():
    chapter, ex = plan()
    big = torch.zeros(16 << 20)
    raw = [{"name": c.name, "output": [big[i:] for i in range(20)], "seconds": 0.0} for c in ex.cases]
    r = i18n.localize(checker_mod.Checker().grade(chapter, ex, raw), "en")
    assert r.status == model.ERROR and "larger than the judge checks" in r.cases[0].message
    deep: list = []
    for _ in range(checker_mod.CHECK_DEPTH + 5):
        deep = [deep]
    raw = [{"name": c.name, "output": deep, "seconds": 0.0} for c in ex.cases]
    r = i18n.localize(checker_mod.Checker().grade(chapter, ex, raw), "en")
    assert r.status == model.ERROR and "nested more than" in r.cases[0].message


def test_checking_past_its_time_limit_is_stopped_and_named(monkeypatch):
    """A check that runs past CHECK_TIMEOUT_S is stopped in the checking thread, and nothing of it lands later."""
    start = time.perf_counter()
    with pytest.raises(checker_mod.CheckTimeout):
        with checker_mod.time_limit(0.3):
            while True:
                pass
    assert time.perf_counter() - start < 5
    with checker_mod.time_limit(0.05):
        pass
    time.sleep(0.2)  # a timer that fired late must not raise here
    chapter, ex = plan()
    monkeypatch.setattr(checker_mod, "CHECK_TIMEOUT_S", 0.2)
    slow = checker_mod.Checker()
    monkeypatch.setattr(slow, "_verdict", lambda *a: [time.sleep(0.01) for _ in iter(int, 1)])
    raw = [{"name": c.name, "output": torch.zeros(10, 4), "seconds": 0.0} for c in ex.cases]
    r = i18n.localize(slow.grade(chapter, ex, raw), "en")
    assert r.status == model.ERROR and "stopped checking your result" in r.cases[0].message


# ---------------------------------------------------------------- a stalled class and a request never whole

def test_a_request_that_never_completes_ends_the_worker_in_seconds(mode):
    """Part of a request read by someone else: the worker gives up on it within REQUEST_TIMEOUT_S, so the judge
    learns at once, not after its minutes-long wait for the answer."""
    w = worker_pool.Worker().start()
    try:
        header = wire.HEADER.pack(wire.JSON, 1000)
        os.write(w._in, header + b'{"op": "gra')  # and the rest never comes
        start = time.perf_counter()
        try:
            w.proc.wait(timeout=limits.REQUEST_TIMEOUT_S + 30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker still waits after {time.perf_counter() - start:.0f} s for a request never whole")
        assert "did not arrive whole" in w._log_tail()
    finally:
        w.close()


@pytest.mark.skipif(os.name == "nt", reason="Ctrl-C is sent as SIGINT (POSIX)")
def test_an_interrupted_class_leaves_every_students_row(tmp_path):
    """Ctrl-C while one student stalls: the gradebook has every student's row, graded or saying why not."""
    klass, out = tmp_path / "class", tmp_path / "out"
    student(klass / "alice", "")
    student(klass / "bob", "import time\ntime.sleep(100)\n")  # stalls its import (the limit is 120 s)
    grades = out / "grades.csv"
    proc = subprocess.Popen([sys.executable, str(REPO / "judge.py"), "--class", str(klass), EXERCISE,
                             "--trusted-class", "--workers", "1", "--gradebook", str(grades), "--json",
                             str(out / "class.json")], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "HF_HUB_OFFLINE": "1", "GRADING_LANG": "en"})
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            rows = read_gradebook(grades)
            if rows.get("alice", {}).get("points") not in (None, "0"):
                break
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.5)
        else:
            pytest.fail("alice was never graded")
        assert "not graded yet" in rows["bob"]["note"], rows  # every row from the start
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        text = proc.communicate(timeout=60)[0]
    finally:
        proc.kill()
    assert proc.returncode == 130, text
    rows = read_gradebook(grades)
    assert set(rows) == {"alice", "bob"}, rows
    assert float(rows["alice"]["points"]) > 0 and rows["alice"]["note"] == ""
    assert rows["bob"]["points"] == "0" and "interrupted" in rows["bob"]["note"], rows
    assert "every student's row" in text, text
    report = (out / "class.json").read_text(encoding="utf-8")  # every report, not only the gradebook
    assert '"alice"' in report and '"bob"' in report


def read_gradebook(path: Path) -> dict[str, dict]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError:
        return {}
    return {r["student"]: r for r in csv.DictReader(io.StringIO(text))}


# ---------------------------------------------------------------- nothing shared between students

def learner_says(result: model.ExerciseResult, tag: str) -> str:
    """What the learner's code reported as TAG<...>TAG in its error (the source line that writes it splits the tag,
    so the traceback's copy of that line is never taken for it)."""
    found = re.findall(tag + r"<(.*?)>" + tag, result.cases[0].message, re.S)
    assert found, result.cases[0].message
    return found[-1]


SCAN = """
import re
_found, _canary = set(), 'CANARY-' + 'SCAN:' + '{canary}'
try:
    _mem = open('/proc/self/mem', 'rb', buffering=0)
    for _line in open('/proc/self/maps').read().splitlines():
        _addr, _perms = _line.split()[:2]
        _lo, _hi = (int(x, 16) for x in _addr.split('-'))
        if not _perms.startswith('rw') or _hi - _lo > 1 << 31:
            continue
        _pos = _lo
        while _pos < _hi:
            _n = min(1 << 22, _hi - _pos)
            try:
                _mem.seek(_pos)
                _chunk = _mem.read(_n)
            except OSError:
                break
            for _m in re.finditer(rb'(?:VICTIM-SECRET|CANARY-SCAN):([0-9a-f]{{16}})', _chunk):
                _found.add(_m.group(1).decode())
            _pos += max(_n - 64, 1) if _pos + _n < _hi else _n
except OSError as e:
    _found.add(type(e).__name__)
raise RuntimeError('MEM' + '<' + ','.join(sorted(_found)) + '>' + 'MEM')
"""


PRLIMIT = """
import os, resource
try:
    resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (8, 8))
    _seen = 'done'
except BaseException as e:
    _seen = type(e).__name__
raise RuntimeError('PRLIMIT' + '<' + _seen + '>' + 'PRLIMIT')
"""
PATH = """
import sys
raise RuntimeError('PATH' + '<' + repr(sys.path) + '>' + 'PATH')
"""
HIDDEN = """
import sys
_u = sys.modules.get('grading.worker.calls.unchanged')
if _u is not None:
    _u.changed_inputs = lambda before: []  # the process's own report now never names a change
_reference = embedding_backward
def embedding_backward(grad_out, ids, vocab_size):
    out = _reference(grad_out, ids, vocab_size)
    grad_out.mul_(2)  # the caller's gradient, changed in place
    return out
"""
MANY = """
def embedding_backward(grad_out, ids, vocab_size):
    return ['x' * 100 + str(i) for i in range(20_000)]  # 2 MB a case, five cases
"""


@pytest.fixture(scope="module")
def hostile_class(mode, tmp_path_factory):
    """One class per mode, graded in order on one worker, so each attacker runs where the students before it ran
    and before the students after it: a victim (with a secret in its file), five attackers, a second victim, and
    one that hides its own change from its process's report."""
    klass = tmp_path_factory.mktemp(f"round3-{mode}") / "class"
    secret, canary = os.urandom(8).hex(), os.urandom(8).hex()
    bodies = {"a_victim": f"SECRET = 'VICTIM-SECRET:{secret}'\n", "b_prlimit": PRLIMIT,
              "c_memory": SCAN.format(canary=canary), "d_path": PATH,
              "e_stride0": forged_frames("torch.zeros(1).expand(2**28)"), "f_many": MANY, "g_victim": "",
              "h_hidden": HIDDEN}
    folders = [student(klass / name, body) for name, body in bodies.items()]
    peak = _peak_mb()
    results = scheduler.grade_many(folders, EXERCISE, workers=1, lang=i18n.MARKED)
    grown = _peak_mb() - peak
    return {name: i18n.localize(rs[0], "en") for name, rs in zip(bodies, results)}, secret, canary, grown


def _peak_mb() -> int:
    """This process's peak memory in MB (0 where resource is missing: Windows)."""
    try:
        import resource
    except ImportError:
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10  # kB on Linux


def test_a_stride_0_tensor_in_a_small_frame_is_a_named_non_pass_not_a_gigabyte(hostile_class):
    """A 1.7 kB frame holding torch.zeros(1).expand(2**28): the judge must not allocate what it expands to (1 GB)."""
    results, _secret, _canary, grown_mb = hostile_class
    r = results["e_stride0"]
    if r.status == model.PASSED and os.name == "nt":
        pytest.skip("the learner process found no result pipe to forge frames on here (Windows pipes)")
    assert r.status == model.ERROR and "larger than the judge checks" in r.cases[0].message, r
    assert grown_mb < 512, f"the judge's peak memory grew by {grown_mb} MB grading the class"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resource.prlimit exists on Linux only")
def test_a_learner_cannot_lower_the_workers_limits_for_the_next_student(hostile_class):
    """resource.prlimit on the worker (the learner process's parent) made the next student's grading fail."""
    results = hostile_class[0]
    # Refused is the guard's PermissionError; either way the call did not happen
    assert learner_says(results["b_prlimit"], "PRLIMIT") in {"PermissionError", "Refused"}
    assert results["g_victim"].status == model.PASSED, results["g_victim"]


def test_no_writable_shared_folder_on_a_learner_processs_sys_path(hostile_class):
    """A module left in a folder on sys.path (the folder the worker or a spare started in: /tmp, the scratch root)
    would run in the next student's process before its guard."""
    seen = eval(learner_says(hostile_class[0]["d_path"], "PATH"))
    shared = {"", "/tmp", tempfile.gettempdir()}
    assert not [p for p in seen if p in shared or "grading-" in p or "judge-scratch" in p], seen


def test_no_classmates_code_in_a_learner_processs_memory(hostile_class):
    """The victim's source (its quiz answers with it) was graded first on the same worker; the attacker reads every
    writable page of its own process and must not find it."""
    results, secret, canary, _grown = hostile_class
    assert results["a_victim"].status == model.PASSED, results["a_victim"]
    seen = learner_says(results["c_memory"], "MEM").split(",")
    if canary not in seen:
        pytest.skip(f"a learner process cannot read its own memory here ({seen}): nothing to scan")
    assert secret not in seen


def test_a_result_of_many_separate_values_is_stopped_in_the_worker(hostile_class):
    """Each pickled value becomes a Python object in the judge: a result whose structure (not its tensors) is over
    PICKLE_LIMIT is a named error before the judge loads it."""
    r = hostile_class[0]["f_many"]
    assert r.status == model.ERROR and "too many separate values" in r.cases[0].message, r


def test_a_change_hidden_from_the_learner_processs_own_report_still_fails(hostile_class, mode):
    """The learner's file rewrites what its process reports (no input ever changed) and changes grad_out in place:
    the zygote, which watched the inputs from outside, still sees it."""
    if mode == "spawn":
        pytest.skip("spawn backend: no process outside the learner's watches its inputs (README, isolation table)")
    r = hostile_class[0]["h_hidden"]
    assert r.status == model.WRONG, r
    hidden = [c for c in r.cases if not c.passed]
    assert hidden and all("grad_out" in c.message and "in place" in c.message for c in hidden), r
