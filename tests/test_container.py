"""`python judge.py --class DIR --container`: each student graded in a container of their own.

The flag's refusals and the container's walls are checked everywhere. The class itself is graded in the container
only where an engine and the image are present (python tools/container.py build; CI does not build it): chapter 01
for a student with the reference answer, one with the untouched stub and one whose code looks for the answers, whose
gradebook must equal a local run's (the isolation column aside).
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
from answers import IN_HANDOUT, REASON, solution_source

from grading import container_run
from grading.i18n import show

REPO = Path(__file__).resolve().parent.parent
MODULE = "ch01_embeddings"
SNOOP = f'''
for path in ("/course/solutions/{MODULE}.py", {str(REPO / "solutions" / f"{MODULE}.py")!r}):
    try:
        exec(open(path).read())  # the answers, where they can be read
        break
    except Exception:
        pass
'''


def run_judge(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "judge.py"), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=1200, env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})


def make_class(root: Path) -> Path:
    k = root / "class"
    stub = (REPO / "exercises" / f"{MODULE}.py").read_text(encoding="utf-8")
    for student, text in (("alice", solution_source(MODULE)), ("bob", stub), ("mallory", stub + SNOOP)):
        (k / student / "exercises").mkdir(parents=True)
        (k / student / "exercises" / f"{MODULE}.py").write_text(text, encoding="utf-8")
    return k


def rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def test_container_flag_needs_class():
    done = run_judge("--container")
    assert done.returncode == 2 and "--container belongs to --class DIR" in done.stderr


def test_missing_engine_is_named_with_the_fix(tmp_path):
    (tmp_path / "class" / "alice" / "exercises").mkdir(parents=True)
    done = run_judge("--class", str(tmp_path / "class"), "--container",
                     env={container_run.ENGINE_ENV: "no-such-engine"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no container engine found (no-such-engine)" in done.stdout and "apt-get install podman" in done.stdout


@pytest.mark.parametrize("flag", ["--trusted-class", "--update"])
def test_flags_that_mean_nothing_in_a_container_are_refused(tmp_path, flag):
    (tmp_path / "class" / "alice" / "exercises").mkdir(parents=True)
    done = run_judge("--class", str(tmp_path / "class"), "--container", flag)
    assert done.returncode == 2 and f"{flag} does not work with --container" in done.stdout, done.stdout


def test_each_student_gets_the_walls_and_no_answers(tmp_path):
    cmd = container_run.run_command(["podman"], "n", tmp_path / "sub", tmp_path / "out", "01", 6144)
    uid = container_run.FIRST_UID
    for flag in (f"--user={uid}:{uid}", "--network=none", "--read-only", "--cap-drop=ALL",
                 "--security-opt=no-new-privileges", "--pids-limit=1024", f"--volume={tmp_path / 'sub'}:/submission:ro",
                 f"--volume={tmp_path / 'out'}:/out"):
        assert flag in cmd
    mounts = [a for a in cmd if a.startswith("--volume=")]
    assert f"--volume={REPO / 'grading'}:/course/grading:ro" in mounts
    assert not [m for m in mounts if any(p in m for p in ("solutions", "mutants", "tests", ".git", str(Path.home())))]
    assert not [a for a in cmd if a.startswith(("--env=HOME", "--env-host", "--env=PATH"))]  # no teacher environment


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The same class graded locally and in containers (one run each)."""
    if IN_HANDOUT:  # the class hands in the reference answer, which a hand-out leaves out
        pytest.skip(REASON)
    why_not = container_run.problem()
    if why_not:
        pytest.skip("no container to grade in here (CI does not build the image): " + show(why_not, "en"))
    root = tmp_path_factory.mktemp("container")
    k = make_class(root)
    local = run_judge("--class", str(k), "--gradebook", str(root / "local" / "grades.csv"), "01")
    boxed = run_judge("--class", str(k), "--gradebook", str(root / "boxed" / "grades.csv"), "--container", "01")
    return root, local, boxed


def test_class_in_container_equals_a_local_run(graded):
    root, local, boxed = graded
    assert local.returncode == 0 and boxed.returncode == 0, boxed.stdout[-3000:] + boxed.stderr[-3000:]
    here, there = rows(root / "local" / "grades.csv"), rows(root / "boxed" / "grades.csv")
    assert set(there) == {"alice", "bob", "mallory"}
    for student in here:
        assert {k: v for k, v in there[student].items() if k != "isolation"} == \
            {k: v for k, v in here[student].items() if k != "isolation"}, student
    assert there["alice"]["points"] == there["alice"]["max_points"] and there["bob"]["points"] == "0"
    assert there["mallory"]["points"] == "0"  # no answers to copy in her container
    assert all(container_run.ISOLATION in r["isolation"] for r in there.values())
