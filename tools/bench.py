"""Benchmarks of the judge: a generated class, and check() latency in a notebook-like process.

    python -m tools.bench --students 100            grade a mixed class of 100, print seconds per student
    python -m tools.bench --latency                 check() cold (first call) and warm, per exercise
    python -m tools.bench --latency --backend both  the same with children forked, then with spare processes
                                                    (the backend Windows and macOS use), one after the other
    python -m tools.bench --report --students 6     side by side, each in a fresh process: the class with fork
                                                    and with spawn (os.fork removed, as on Windows), on 1..N
                                                    workers, on a Dask LocalCluster of 2 workers, and one exercise
                                                    from the command line, cold (--target for the class's part)

The class mixes correct students (the reference solutions), untouched stubs, buggy students (each chapter
file is the solution with one exercise replaced by one of its mutants, mutants/<chapter>/) and hostile
students (exit at import, a flood of printing, a fork bomb, reading the solutions, rewriting another
student's file, an endless loop). The run fails (exit 1) if any student's results are not what their kind
must give, so the figures are only printed for a judge that also graded correctly.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KINDS = ("correct", "stub", "buggy", "hostile")
MIX = {"correct": 0.4, "stub": 0.2, "buggy": 0.3, "hostile": 0.1}
HOSTILE = {
    "exit": "import os\nos._exit(0)\n",
    "flood": "import sys\nfor _ in range(300):\n    sys.stdout.write('x' * (1 << 20))\n",
    "fork": "import os\nwhile True:\n    os.fork()\n",
    "solutions": f"print(open({str(REPO / 'solutions' / 'ch04_sampling.py')!r}).read())\n",
    "tamper": "import glob\nfor f in glob.glob('{root}/*/exercises/ch04_sampling.py'):\n    open(f, 'w').write('')\n",
    "loop": None,  # an endless loop inside one exercise: costs its full time limit
}


def _load() -> float:
    """The 1-minute load average (nan on Windows, which has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def _chapter_files() -> list[str]:
    return sorted(p.name for p in (REPO / "solutions").glob("ch[0-9][0-9]_*.py"))


def _mutants(module: str) -> list[Path]:
    return sorted((REPO / "mutants" / module).glob("*__*.py"))


def make_class(root: Path, n: int, seed: int = 0) -> dict[str, str]:
    """Write `n` students into root/<name>/exercises/; returns name -> kind ("hostile:<how>" for hostile)."""
    rng = random.Random(seed)
    counts = {k: int(round(MIX[k] * n)) for k in KINDS}
    counts["correct"] += n - sum(counts.values())
    kinds = [k for k in KINDS for _ in range(counts[k])]
    rng.shuffle(kinds)
    hostile_ways = list(HOSTILE)
    roster = {}
    for i, kind in enumerate(kinds):
        name = f"s{i:03d}_{kind}"
        folder = root / name / "exercises"
        folder.mkdir(parents=True)
        for fname in _chapter_files():
            src = REPO / ("exercises" if kind == "stub" else "solutions") / fname
            text = src.read_text(encoding="utf-8")
            if kind == "buggy":
                mutants = _mutants(fname[:-3])
                if mutants:
                    text += "\n\n# ---- a mistake\n" + rng.choice(mutants).read_text(encoding="utf-8")
            (folder / fname).write_text(text, encoding="utf-8")
        if kind == "hostile":
            how = hostile_ways[sum(1 for k in roster.values() if k.startswith("hostile")) % len(hostile_ways)]
            target = folder / "ch04_sampling.py"
            body = target.read_text(encoding="utf-8")
            if how == "loop":
                body += "\n\ndef softmax(logits, dim=-1):\n    while True:\n        pass\n"
            else:
                body = HOSTILE[how].replace("{root}", str(root)) + body
            target.write_text(body, encoding="utf-8")
            kind = f"hostile:{how}"
        roster[name] = kind
    return roster


def _verify(kind: str, results) -> str | None:
    """Why these results are wrong for a student of this kind, or None."""
    failed = [r.name for r in results if not r.passed]
    if kind == "correct" and failed:
        return f"a correct student failed {failed}"
    if kind == "stub" and any(r.passed for r in results if not r.is_quiz):
        return "a stub passed an exercise"
    if kind == "buggy" and not failed and len({r.chapter for r in results}) > 1:  # its mistake may be elsewhere
        return "a buggy student passed everything"
    if kind.startswith("hostile"):
        ch04 = [r for r in results if r.chapter == "04" and not r.is_quiz]
        if not ch04:  # a --target without chapter 04, where the hostile code is
            return None
        # a tamperer that finds nothing to write (the sandbox hides the class) may pass; "no submission changed"
        # is its check
        if kind not in ("hostile:loop", "hostile:tamper") and any(r.passed for r in ch04):
            return f"{kind} passed a chapter 04 exercise"
        if kind == "hostile:loop" and next(r for r in ch04 if r.name == "softmax").passed:
            return "an endless softmax passed"
    return None


def bench_class(n: int, workers: int | None, keep: Path | None, target: str | None = None,
                cluster: int = 0) -> int:
    """Grade a generated class of `n` (on `cluster` local Dask workers when given); prints a BENCH line with the
    seconds for --report."""
    from grading.engine import sandbox, scheduler, worker_pool

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="judge-bench-"))
    if keep and root.exists():
        shutil.rmtree(root)
    roster = make_class(root, n)
    names = sorted(roster)
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    mix = ", ".join(f"{sum(1 for k in roster.values() if k.split(':')[0] == kind)} {kind}" for kind in KINDS)
    where = (f"a LocalCluster of {cluster} Dask workers" if cluster
             else f"{workers or worker_pool.default_workers().count} workers")
    print(f"Grading {n} generated students ({mix}) "
          f"on {where}; "
          f"isolation: {sandbox.detect()}; "
          f"backend: {sandbox.backend().name}", flush=True)
    start = time.perf_counter()
    done = [0]

    def on_done(i, _src, results):
        done[0] += 1
        if done[0] % max(1, n // 10) == 0 or done[0] == n:
            el = time.perf_counter() - start
            print(f"  {done[0]}/{n} students, {el:.0f} s elapsed, about {el / done[0] * (n - done[0]):.0f} s left",
                  flush=True)

    sources = [root / s / "exercises" for s in names]
    if cluster:
        graded, start = _on_local_cluster(cluster, sources, target, on_done)
    else:
        graded = scheduler.grade_many(sources, target, workers=workers, on_done=on_done, blocked_extra=[root])
    seconds = time.perf_counter() - start
    problems = [f"{s} ({roster[s]}): {why}" for s, rs in zip(names, graded) if (why := _verify(roster[s], rs))]
    changed = [str(p) for p, data in before.items() if not p.exists() or p.read_bytes() != data]
    if changed:
        problems.append(f"{len(changed)} submission files were changed on disk, e.g. {changed[0]}")
    n_ex = len(graded[0]) if graded else 0
    print(f"\n{n} students x {n_ex} exercises graded in {seconds:.1f} s: {seconds / n:.2f} s per student "
          f"({os.cpu_count()} CPUs, load average {_load():.1f} at the end).")
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    if problems:
        print("WRONG RESULTS:\n  " + "\n  ".join(problems[:20]))
        return 1
    print("Every student got the results their kind must give; no submission was changed.")
    print("BENCH " + json.dumps({"seconds": seconds}))
    return 0


def _on_local_cluster(n: int, sources: list[Path], target: str | None, on_done):
    """The class on a distributed.LocalCluster of n worker processes (1 thread each) on 127.0.0.1; (results, the
    time grading started: after the cluster is up, as a teacher's running cluster would be)."""
    from distributed import Client, LocalCluster

    from grading.engine import cluster

    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as lc, Client(lc) as client:
        start = time.perf_counter()
        return cluster.grade_on_cluster(client, sources, target, on_done=on_done), start


def _timed(argv: list[str], env: dict[str, str]) -> float | None:
    """Seconds a fresh `python -m tools.bench ...` reports (its BENCH line), or None when it failed."""
    done = subprocess.run([sys.executable, "-m", "tools.bench", *argv], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=7200)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith("BENCH ")), None)
    if done.returncode or line is None:
        print(done.stdout[-1500:], done.stderr[-1500:])
        return None
    return json.loads(line[6:])["seconds"]


def _cold_exercise(exercise: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "judge.py", exercise, "-q"], cwd=REPO, env=env, capture_output=True,
                   timeout=1800)
    return time.perf_counter() - start


def report(n: int, target: str | None, max_workers: int, exercise: str) -> int:
    """Everything side by side, each in a fresh process (so each pays its own start, as a teacher's run does)."""
    from grading.engine import worker_pool

    base = {**os.environ, "HF_HUB_OFFLINE": "1"}
    no_fork = {**base, "GRADING_BACKEND": "spawn",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "tests" / "no_fork"), str(REPO),
                                                            base.get("PYTHONPATH")]))}
    common = ["--students", str(n)] + (["--target", target] if target else [])
    rows = [(f"class of {n}, fork, {k} worker{'s' * (k > 1)}", _timed(common + ["--workers", str(k)],
                                                                       {**base, "GRADING_BACKEND": "fork"}))
            for k in range(1, max_workers + 1)]
    rows.append((f"class of {n}, spawn (no os.fork), {max_workers} workers",
                 _timed(common + ["--workers", str(max_workers)], no_fork)))
    rows.append((f"class of {n}, Dask LocalCluster of 2 workers", _timed(common + ["--cluster", "2"], base)))
    rows.append((f"python judge.py {exercise}, cold", _cold_exercise(exercise, base)))
    first = rows[0][1]
    print(f"\n{os.cpu_count()} CPUs, load average {_load():.1f}, default workers here: "
          f"{worker_pool.default_workers().count}")
    print(f"  {'run':<48} {'seconds':>8} {'vs row 1':>12}")
    for what, seconds in rows:
        ratio = f"{seconds / first:.2f}x" if seconds and first and "class" in what else ""
        print(f"  {what:<48} {seconds if seconds is None else round(seconds, 1)!s:>8} {ratio:>12}")
    return 0 if all(s is not None for _w, s in rows) else 1


LATENCY_SCRIPT = """
import sys, time, json
sys.path.insert(0, {repo!r})
t0 = time.perf_counter()
from grading import check
out = {{}}
for name in {targets!r}:
    t = time.perf_counter(); check(name, source={source!r}); cold = time.perf_counter() - t
    warm = []
    for _ in range({repeats}):
        time.sleep({pause})
        t = time.perf_counter(); r = check(name, source={source!r}); warm.append(time.perf_counter() - t)
    out[name] = (cold, sorted(warm)[len(warm) // 2], r.passed)
print(json.dumps(out))
"""


def bench_latency(targets: list[str], source: Path, repeats: int, pause: float = 0.0) -> int:
    """check() in a fresh process: the first call per exercise (the very first one starts the worker) and
    the median of later calls."""
    import json

    script = LATENCY_SCRIPT.format(repo=str(REPO), targets=targets, source=str(source), repeats=repeats,
                                    pause=pause)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        print(done.stdout[-2000:], done.stderr[-3000:])
        return 1
    data = json.loads(done.stdout.strip().splitlines()[-1])
    from grading.engine import sandbox

    print(f"check() latency, {source.name}/, backend {sandbox.backend().name} ({os.cpu_count()} CPUs, load average "
          f"{_load():.1f}); whole run {time.perf_counter() - t:.1f} s")
    print(f"  {'exercise':<26} {'first call':>10} {'warm (median)':>14}  passed")
    for name, (cold, warm, passed) in data.items():
        print(f"  {name:<26} {cold:>9.2f}s {warm:>13.2f}s  {passed}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--students", type=int, default=0, help="grade a generated class of this many students")
    p.add_argument("--workers", type=int, default=None, help="grading workers (default: one per core, as memory "
                   "allows; with --report the largest count compared)")
    p.add_argument("--target", help="grade only this chapter or exercise of the class (default: everything)")
    p.add_argument("--cluster", type=int, default=0, help="grade the class on a Dask LocalCluster of this many workers")
    p.add_argument("--report", action="store_true", help="fork/spawn, 1..N workers, a cluster of 2 and one cold "
                   "exercise side by side")
    p.add_argument("--exercise", default="top_p_filter", help="the exercise --report times cold")
    p.add_argument("--keep", help="write the class here and keep it (default: a temporary folder)")
    p.add_argument("--latency", action="store_true", help="measure check() cold and warm")
    p.add_argument("--targets", default="top_p_filter,greedy_generate,lookup,logit_lens,04",
                   help="exercises/chapters for --latency")
    p.add_argument("--source", default=str(REPO / "solutions"), help="folder graded by --latency")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--pause", type=float, default=0.0, help="seconds between warm checks, as a learner edits "
                   "(the spawn backend's next spare imports torch meanwhile; back to back it is waited for)")
    p.add_argument("--backend", choices=["fork", "spawn", "both"], help="how learner processes are made "
                   "(default: this system's; both: fork, then spawn)")
    args = p.parse_args(argv)
    if args.backend == "both":
        rest = [a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("--backend", "both")]
        return max(subprocess.run([sys.executable, "-m", "tools.bench", *rest, "--backend", b], cwd=REPO,
                                  env={**os.environ, "GRADING_BACKEND": b}).returncode for b in ("fork", "spawn"))
    if args.backend:
        os.environ["GRADING_BACKEND"] = args.backend
    rc = 0
    if args.report:
        return report(args.students or 6, args.target, args.workers or 2, args.exercise)
    if args.students:
        rc |= bench_class(args.students, args.workers, Path(args.keep) if args.keep else None, args.target,
                          args.cluster)
    if args.latency:
        rc |= bench_latency(args.targets.split(","), Path(args.source), args.repeats, args.pause)
    if not args.students and not args.latency:
        p.print_help()
    return rc


if __name__ == "__main__":
    sys.exit(main())
