"""`python judge.py --class DIR --container`: every student graded in a container of their own.

The image (container/Containerfile, built by `python tools/container.py build`) holds Python, the pinned grading
dependencies and the converted course model. Each student gets one run of it: no network, a read-only root, this
course folder read-only at /course, only that student's exercise files (read-only) at /submission, one scratch
folder of their own at /out, all capabilities dropped, no new privileges, and their own process and memory limits.
Inside, the judge grades the one folder as `python judge.py --source` would (bubblewrap too, where the container
lets it start, else the audit hooks) and saves the results in /out; here they are read back into the class's
reports. A student's code never sees a classmate's files, the teacher's files or environment, or the network,
whatever it does to the judge in its own container: the worst it can do is spoil its own row.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .i18n import _, show, verbatim

IMAGE = "localhost/llm-course-grader:latest"
ENGINE_ENV = "GRADING_CONTAINER_ENGINE"  # the engine command, e.g. "podman --runtime runc" (default: podman, docker)
IMAGE_ENV = "GRADING_CONTAINER_IMAGE"
TIMEOUT_S = 1800  # one student's whole run, far above a full course's grading; then the container is removed
RESULTS_MAX_BYTES = 64 << 20  # a results file over this is that student's non-pass, never read
JUDGE_MB = 2048  # the judge and its warm worker, on top of the learner's --memory-mb
# Each student's container runs as a user id of its own, so that per-user limits (processes) are never shared with
# a classmate's or the teacher's; within the 65536 ids rootless Podman maps, clear of the usual 1000s.
FIRST_UID, UIDS = 40000, 20000
REPO = Path(__file__).resolve().parent.parent
COURSE_PARTS = ("grading", "lesson_utils", "exercises")  # what the judge reads; never solutions/, mutants/, tests/
ISOLATION = "in a container of its own (no network, read-only course, only this student's files)"


def say(text: str = "", **kwargs) -> None:
    print(show(text), **kwargs)


def engine() -> list[str] | None:
    """The container engine's command: $GRADING_CONTAINER_ENGINE, else podman, else docker on PATH; None if none."""
    chosen = shlex.split(os.environ.get(ENGINE_ENV, ""))
    if chosen:
        return chosen if shutil.which(chosen[0]) else None
    for name in ("podman", "docker"):
        if shutil.which(name):
            return [name]
    return None


def image() -> str:
    return os.environ.get(IMAGE_ENV, "").strip() or IMAGE


def problem() -> str:
    """Why a class cannot be graded in containers here (no engine, no image, no container starts), with the fix;
    '' when it can: a container is started for real."""
    cmd = engine()
    if cmd is None:
        wanted = os.environ.get(ENGINE_ENV, "").strip()
        return _("--container: no container engine found ({engine}). Install Podman (Debian/Ubuntu: sudo apt-get "
                 "install podman runc; macOS and Windows: Podman Desktop) or Docker, or set {env} to its command; "
                 "or grade without containers where bubblewrap works: python judge.py --class DIR.",
                 engine=wanted or "podman, docker", env=ENGINE_ENV)
    try:
        found = subprocess.run([*cmd, "image", "inspect", image()], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _("--container: {engine} does not answer ({error}).", engine=" ".join(cmd), error=str(exc)[:300])
    missing = found.returncode != 0 and any(w in found.stderr.lower() for w in ("not known", "no such image"))
    if missing:
        return _("--container: no image {image} in {engine}. Build it once with: python tools/container.py build",
                 image=image(), engine=" ".join(cmd))
    probe = [*cmd, "run", "--rm", "--network=none", "--read-only", "--ulimit=nofile=1024:1024",
             "--ulimit=nproc=1024:1024", image(), "python", "-c", "pass"]
    try:
        started = found if found.returncode != 0 else subprocess.run(probe, capture_output=True, text=True,
                                                                     errors="replace", timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        started = subprocess.CompletedProcess(probe, 1, "", str(exc))
    if started.returncode != 0:
        why = (started.stderr.strip().splitlines() or ["no message"])[-1][:300]
        return _("--container: {engine} could not start a container from {image} ({error}). Where Podman's default "
                 "runtime fails (crun on a host that mixes cgroup versions), name the command to use: {env}=\"podman "
                 "--runtime runc --cgroup-manager=cgroupfs\".", engine=" ".join(cmd), image=image(),
                 error=verbatim(why), env=ENGINE_ENV)
    return ""


def run_command(cmd: list[str], name: str, submission: Path, out: Path, target: str | None,
                memory_mb: int, uid: int = FIRST_UID) -> list[str]:
    """The engine command that grades one student's `submission` folder as user `uid` and leaves the results in
    `out`."""
    inside = ["python", "-P", "-m", "grading.container_run", "/submission", "/out/results.json",
              str(memory_mb), target or ""]
    course = [f"--volume={REPO / part}:/course/{part}:ro" for part in COURSE_PARTS]
    return [*cmd, "run", "--rm", "--name", name, f"--user={uid}:{uid}", "--network=none", "--read-only",
            "--cap-drop=ALL", "--security-opt=no-new-privileges", "--security-opt=systempaths=unconfined",
            "--pids-limit=1024", f"--memory={memory_mb + JUDGE_MB}m", "--ulimit=nofile=1024:1024",
            "--ulimit=nproc=1024:1024", "--env=PYTHONPATH=/course", "--workdir=/tmp", *course,
            f"--volume={submission}:/submission:ro", f"--volume={out}:/out", image(), *inside]


def grade_one(cmd: list[str], submission: Path, out: Path, target: str | None,
              memory_mb: int, uid: int = FIRST_UID) -> tuple[list | None, str]:
    """One student's results (None and why, when their container gave none)."""
    from .class_run import load_state
    from .reports import learner_text

    name = f"llm-course-{uuid.uuid4().hex[:12]}"
    out.mkdir(parents=True)
    out.chmod(0o777)  # the container's user writes here
    log = out.with_suffix(".log")  # the container's output, outside its reach; only its end is read
    try:
        with open(log, "wb") as sink:
            done = subprocess.run(run_command(cmd, name, submission, out, target, memory_mb, uid),
                                  stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        subprocess.run([*cmd, "rm", "--force", name], capture_output=True)
        return None, _("its container ran past {seconds} s and was stopped", seconds=TIMEOUT_S)
    results = out / "results.json"
    if not results.is_file():
        with open(log, "rb") as f:
            f.seek(max(0, log.stat().st_size - 4096))
            tail = f.read().decode("utf-8", "replace").strip().splitlines() or ["no message"]
        return None, _("its container stopped without results (exit code {code}: {error})", code=done.returncode,
                       error=verbatim(learner_text.escape(tail[-1][:300])))
    if results.stat().st_size > RESULTS_MAX_BYTES:
        return None, _("its container's results are over {mb} MB", mb=RESULTS_MAX_BYTES >> 20)
    try:
        rows, _subs = load_state(results)
        return next(iter(rows.values())), ""
    except (ValueError, TypeError, KeyError, StopIteration, AttributeError) as exc:
        return None, _("its container's results could not be read ({error})", error=type(exc).__name__)


def run(args, titles: dict[str, str]) -> int:
    """Grade the class folder `args.class_dir` one container per student and write its reports (the exit code)."""
    from .class_run import _submissions
    from .submissions import class_folder_problem
    from .engine import worker_pool
    from .reports import learner_text
    from .reports.gradebook import write_class_outputs

    for given, flag in ((args.scheduler, "--scheduler"), (args.update, "--update"),
                        (args.trusted_class, "--trusted-class")):
        if given:
            say(_("{flag} does not work with --container: each student is graded in a container here. Leave out "
                  "one of them.", flag=flag))
            return 2
    folder = Path(args.class_dir)
    not_a_class = class_folder_problem(folder)
    if not_a_class:
        say(not_a_class)
        return 2
    from .catalog import load_chapters, select

    select(load_chapters(), args.target)
    why_not = problem()
    if why_not:
        say(why_not)
        return 2
    cmd = engine()
    scratch = Path(tempfile.mkdtemp(prefix="judge-container-"))
    try:
        subs = _submissions(folder, scratch / "in", args.student)
        if subs is None:
            return 2
        todo = [s for s in subs.values() if s.graded]
        ungraded = {s.student: s.reason for s in subs.values() if not s.graded}
        for name, reason in ungraded.items():
            say(_("Not graded: {student}: {reason}", student=name, reason=reason), flush=True)
        count = args.workers or worker_pool.default_workers().count
        say(_("Grading {students} students, each in a container of its own ({image}), {count} at a time.",
              students=len(todo), image=image(), count=count), flush=True)
        rows: dict[str, list] = {}

        def one(i: int) -> None:
            s = todo[i]
            results, why = grade_one(cmd, s.folder.resolve(), scratch / "out" / str(i), args.target, args.memory_mb,
                                     FIRST_UID + i % UIDS)
            if results is None:
                ungraded[s.student] = why
                results = []
            for r in results:
                learner_text.tidy(r)
                r.isolation = f"{r.isolation}, {ISOLATION}"
            rows[s.student] = results
            say(f"[{len(rows)}/{len(todo)}] {s.student}" + (f": {show(why)}" if why else ""), flush=True)

        with ThreadPoolExecutor(max_workers=count) as pool:
            list(pool.map(one, range(len(todo))))
        rows |= {name: [] for name in ungraded if name not in rows}
        rows = dict(sorted(rows.items()))
        notes = {n: "; ".join(show(x) for x in s.notes) for n, s in subs.items() if s.notes}
        gradebook = Path(args.gradebook or "gradebook.csv")
        gradebook.parent.mkdir(parents=True, exist_ok=True)
        write_class_outputs(rows, titles, gradebook, json_path=args.json,
                            feedback_dir=args.feedback, lms_csv=args.lms_csv, lms_format=args.lms or "canvas",
                            ungraded=ungraded, notes=notes, junit_dir=args.junit, gradescope_dir=args.gradescope,
                            classroom_dir=args.classroom, excel=args.excel)
        return 1 if ungraded else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def inside(source: str, results: str, memory_mb: str, target: str = "") -> int:
    """In the container: grade `source` as one learner's folder and save the results for the host to read."""
    from .class_run import save_state
    from .engine import scheduler
    from .engine.sandbox import detect

    print(show(_("Learner code runs in: {isolation}", isolation=detect().text())), flush=True)
    graded = scheduler.grade(Path(source), target or None, memory_mb=int(memory_mb), workers=1)
    save_state(Path(results), {"student": graded}, {})
    return 0


if __name__ == "__main__":
    sys.exit(inside(*sys.argv[1:]))
