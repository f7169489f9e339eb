"""Benchmarks of the judge: a generated class, and check() latency in a notebook-like process.

    python -m tools.bench --students 100            grade a mixed class of 100, print seconds per student
    python -m tools.bench --latency                 check() cold (first call) and warm, per exercise
    python -m tools.bench --latency --backend both  the same with children forked, then with spare processes
                                                    (the backend Windows and macOS use), one after the other

The class mixes correct students (the reference solutions), untouched stubs, buggy students (each chapter
file is the solution with one exercise replaced by one of its mutants, mutants/<chapter>/) and hostile
students (exit at import, a flood of printing, a fork bomb, reading the solutions, rewriting another
student's file, an endless loop). The run fails (exit 1) if any student's results are not what their kind
must give, so the figures are only printed for a judge that also graded correctly.
"""
from __future__ import annotations

import argparse
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
    if kind == "buggy" and not failed:
        return "a buggy student passed everything"
    if kind.startswith("hostile"):
        ch04 = [r for r in results if r.chapter == "04" and not r.is_quiz]
        # a tamperer that finds nothing to write (the sandbox hides the class) may pass; "no submission changed"
        # is its check
        if kind not in ("hostile:loop", "hostile:tamper") and any(r.passed for r in ch04):
            return f"{kind} passed a chapter 04 exercise"
        if kind == "hostile:loop" and next(r for r in ch04 if r.name == "softmax").passed:
            return "an endless softmax passed"
    return None


def bench_class(n: int, workers: int | None, keep: Path | None) -> int:
    from grading.engine import sandbox, scheduler

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="judge-bench-"))
    if keep and root.exists():
        shutil.rmtree(root)
    roster = make_class(root, n)
    names = sorted(roster)
    before = {p: p.read_bytes() for p in root.rglob("*.py")}
    mix = ", ".join(f"{sum(1 for k in roster.values() if k.split(':')[0] == kind)} {kind}" for kind in KINDS)
    print(f"Grading {n} generated students ({mix}) "
          f"on {workers or min(2, os.cpu_count() or 1)} workers; isolation: {sandbox.detect()}; "
          f"backend: {sandbox.backend().name}", flush=True)
    start = time.perf_counter()
    done = [0]

    def on_done(i, _src, results):
        done[0] += 1
        if done[0] % max(1, n // 10) == 0 or done[0] == n:
            el = time.perf_counter() - start
            print(f"  {done[0]}/{n} students, {el:.0f} s elapsed, about {el / done[0] * (n - done[0]):.0f} s left",
                  flush=True)

    graded = scheduler.grade_many([root / s / "exercises" for s in names], workers=workers, on_done=on_done,
                               blocked_extra=[root])
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
    return 0


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
    p.add_argument("--workers", type=int, default=None, help="grading workers (default: 2, or 1 on one CPU)")
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
    if args.students:
        rc |= bench_class(args.students, args.workers, Path(args.keep) if args.keep else None)
    if args.latency:
        rc |= bench_latency(args.targets.split(","), Path(args.source), args.repeats, args.pause)
    if not args.students and not args.latency:
        p.print_help()
    return rc


if __name__ == "__main__":
    sys.exit(main())
