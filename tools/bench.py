"""Benchmarks of the judge: a generated class, and check() latency in a notebook-like process.

    python -m tools.bench --students 100            grade a mixed class of 100, print seconds per student, the
                                                    CPU time of the judge and of its workers, and how much of
                                                    the run was serial (start-up, the single checking thread)
    python -m tools.bench --students 100 --stubs 0.33   the issue's class: a third of it untouched stubs
    python -m tools.bench --latency                 check() cold (first call) and warm, per exercise
    python -m tools.bench --latency --backend both  the same with children forked, then with spare processes
                                                    (the backend Windows and macOS use), one after the other
    python -m tools.bench --report --students 6     side by side, each in a fresh process: the class with fork
                                                    and with spawn (os.fork removed, as on Windows), on 1..N
                                                    workers, on a Dask LocalCluster of 2 workers, and one exercise
                                                    from the command line, cold (--target for the class's part);
                                                    --large 100 adds the class of 100 with a third stubs

Wall-clock seconds mean something only on an idle machine (the load average is printed with them); the CPU
seconds (user + system, the judge and every process under it) and the serial share can be read on a busy one.

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


def mix_with_stubs(stubs: float | None) -> dict[str, float]:
    """MIX, or with `stubs` of the class untouched stubs and the other kinds in MIX's proportions."""
    if stubs is None:
        return dict(MIX)
    if not 0 <= stubs <= 1:
        raise SystemExit(f"--stubs is a share of the class between 0 and 1, not {stubs}")
    rest = sum(v for k, v in MIX.items() if k != "stub")
    return {k: stubs if k == "stub" else (1 - stubs) * v / rest for k, v in MIX.items()}


def make_class(root: Path, n: int, seed: int = 0, mix: dict[str, float] | None = None) -> dict[str, str]:
    """Write `n` students into root/<name>/exercises/; returns name -> kind ("hostile:<how>" for hostile)."""
    rng = random.Random(seed)
    mix = mix or MIX
    counts = {k: int(round(mix[k] * n)) for k in KINDS}
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


def _cpu(children: bool = False) -> float:
    """CPU seconds (user + system) of this process, or of its reaped children (zero on Windows)."""
    t = os.times()
    return t.children_user + t.children_system if children else t.user + t.system


def descendants_cpu() -> float | None:
    """CPU seconds (user + system, with those of the processes they have reaped) of every live process under this
    one: the workers, inside bubblewrap too, whose time never reaches RUSAGE_CHILDREN; None without /proc."""
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return None
    parent, ticks = {}, {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        parent[int(pid)] = int(fields[1])
        ticks[int(pid)] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    me, total = os.getpid(), 0
    for pid in ticks:
        p = parent.get(pid)
        while p and p != me:
            p = parent.get(p)
        if p == me:
            total += ticks[pid]
    return total / os.sysconf("SC_CLK_TCK")


def print_structure(row: dict) -> None:
    """Where a class run's time went (bench_class's figures)."""
    wall, n = row["seconds"], row["workers"]
    print(f"Where the time went ({wall:.1f} s wall, load average {row['load']:.1f}):\n"
          f"  start-up, until a worker first had a learner file:  {row['first_request']:.1f} s\n"
          f"  after the last reply (checks, reports):             {wall - row['last_reply']:.1f} s\n"
          f"  workers busy with a learner file:                   {row['worker_busy'] / (n * wall):.0%} of "
          f"{n} x wall")
    workers = "?" if row["workers_cpu"] is None else f"{row['workers_cpu']:.1f} s"
    total = row["judge_cpu"] + (row["workers_cpu"] or 0.0)
    print(f"CPU (user + system): judge {row['judge_cpu']:.1f} s, of which its single checking thread "
          f"{row['check_cpu']:.1f} s and building inputs {row['inputs_cpu']:.1f} s; workers and learner processes "
          f"{workers}; in all {total:.1f} s, {total / wall:.2f} cores busy on average")


def bench_class(n: int, workers: int | None, keep: Path | None, target: str | None = None,
                cluster: int = 0, stubs: float | None = None) -> int:
    """Grade a generated class of `n` (on `cluster` local Dask workers when given); prints a BENCH line with the
    seconds (and, on the local scheduler, the CPU time and the run's serial parts) for --report."""
    from grading.engine import sandbox, scheduler, worker_pool

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="judge-bench-"))
    if keep and root.exists():
        shutil.rmtree(root)
    roster = make_class(root, n, mix=mix_with_stubs(stubs))
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
    stats = scheduler.RunStats()
    self0, children0 = _cpu(), _cpu(children=True)
    if cluster:
        graded, start = _on_local_cluster(cluster, sources, target, on_done)
    else:
        graded = scheduler.grade_many(sources, target, workers=workers, on_done=on_done, blocked_extra=[root],
                                      stats=stats)
    seconds = time.perf_counter() - start
    judge_cpu = _cpu() - self0
    live = None if cluster else descendants_cpu()  # the workers, still warm
    if live is None:
        worker_pool.close_workers()
    workers_cpu = None if cluster else (live or 0.0) + _cpu(children=True) - children0
    problems = [f"{s} ({roster[s]}): {why}" for s, rs in zip(names, graded) if (why := _verify(roster[s], rs))]
    changed = [str(p) for p, data in before.items() if not p.exists() or p.read_bytes() != data]
    if changed:
        problems.append(f"{len(changed)} submission files were changed on disk, e.g. {changed[0]}")
    n_ex = len(graded[0]) if graded else 0
    print(f"\n{n} students x {n_ex} exercises graded in {seconds:.1f} s: {seconds / n:.2f} s per student "
          f"({os.cpu_count()} CPUs, load average {_load():.1f} at the end).")
    row = {"seconds": seconds, "load": _load(), "judge_cpu": judge_cpu, "workers_cpu": workers_cpu,
           **{k: getattr(stats, k) for k in ("workers", "first_request", "last_reply", "worker_busy", "inputs_cpu",
                                             "check_cpu")}}
    if not cluster:
        print_structure(row)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    if problems:
        print("WRONG RESULTS:\n  " + "\n  ".join(problems[:20]))
        return 1
    print("Every student got the results their kind must give; no submission was changed.")
    print("BENCH " + json.dumps(row))
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


def _timed(argv: list[str], env: dict[str, str]) -> dict | None:
    """What a fresh `python -m tools.bench ...` reports on its BENCH line (seconds, CPU, ...), or None if it failed."""
    done = subprocess.run([sys.executable, "-m", "tools.bench", *argv], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=7200)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith("BENCH ")), None)
    if done.returncode or line is None:
        print(done.stdout[-1500:], done.stderr[-1500:])
        return None
    return json.loads(line[6:])


def _cold_exercise(exercise: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "judge.py", exercise, "-q"], cwd=REPO, env=env, capture_output=True,
                   timeout=1800)
    return time.perf_counter() - start


def report(n: int, target: str | None, max_workers: int, exercise: str, large: int = 0) -> int:
    """Everything side by side, each in a fresh process (so each pays its own start, as a teacher's run does)."""
    from grading.engine import worker_pool

    base = {**os.environ, "HF_HUB_OFFLINE": "1"}
    fork = {**base, "GRADING_BACKEND": "fork"}
    no_fork = {**base, "GRADING_BACKEND": "spawn",
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "tests" / "no_fork"), str(REPO),
                                                            base.get("PYTHONPATH")]))}
    common = ["--students", str(n)] + (["--target", target] if target else [])
    rows = [(f"class of {n}, fork, {k} worker{'s' * (k > 1)}", _timed(common + ["--workers", str(k)], fork))
            for k in range(1, max_workers + 1)]
    rows.append((f"class of {n}, spawn (no os.fork), {max_workers} workers",
                 _timed(common + ["--workers", str(max_workers)], no_fork)))
    rows.append((f"class of {n}, Dask LocalCluster of 2 workers", _timed(common + ["--cluster", "2"], base)))
    if large:
        rows.append((f"class of {large} (a third stubs), fork, {max_workers} workers",
                     _timed(["--students", str(large), "--stubs", "0.33", "--workers", str(max_workers)], fork)))
    start = time.perf_counter()
    _cold_exercise(exercise, base)
    rows.append((f"python judge.py {exercise}, cold", {"seconds": time.perf_counter() - start}))
    first = rows[0][1]["seconds"] if rows[0][1] else None
    print(f"\n{os.cpu_count()} CPUs, load average {_load():.1f}, default workers here: "
          f"{worker_pool.default_workers().count}")
    print(f"  {'run':<48} {'seconds':>8} {'vs row 1':>9} {'CPU s':>7} {'judge':>6} {'checks':>6} {'start':>6}")
    for what, row in rows:
        if row is None:
            print(f"  {what:<48} {'failed':>8}")
            continue
        seconds = row["seconds"]
        ratio = f"{seconds / first:.2f}x" if first and "class of " + str(n) + "," in what else ""
        cpu = (f"{row['judge_cpu'] + row['workers_cpu']:7.0f} {row['judge_cpu']:6.0f} {row['check_cpu']:6.0f} "
               f"{row['first_request']:6.1f}" if row.get("workers_cpu") is not None else "")
        print(f"  {what:<48} {seconds:8.1f} {ratio:>9} {cpu}")
    print("  (CPU s: user + system of the judge and every process under it; judge: the judge process alone; "
          "checks: its single checking thread; start: seconds until a worker first had a learner file)")
    return 0 if all(r is not None for _w, r in rows) else 1


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
    p.add_argument("--stubs", type=float, help="the share of the class that hands in untouched stubs (default "
                   f"{MIX['stub']}); the other kinds keep their proportions")
    p.add_argument("--large", type=int, default=0, help="with --report: also a class of this many, a third stubs")
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
        return report(args.students or 6, args.target, args.workers or 2, args.exercise, args.large)
    if args.students:
        rc |= bench_class(args.students, args.workers, Path(args.keep) if args.keep else None, args.target,
                          args.cluster, args.stubs)
    if args.latency:
        rc |= bench_latency(args.targets.split(","), Path(args.source), args.repeats, args.pause)
    if not args.students and not args.latency:
        p.print_help()
    return rc


if __name__ == "__main__":
    sys.exit(main())
