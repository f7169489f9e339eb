"""The Gradescope side of the judge: what run_autograder runs for each submission.

    python -m grading.gradescope run [--root /autograder] [judge args]

Gradescope unzips the upload (built by tools/gradescope_package.py, `python judge.py gradescope-package`) into
<root>/source, runs setup.sh once when it builds the image, and runs run_autograder for every submission, whose
files are in <root>/submission; the result goes to <root>/results/results.json. The root is /autograder unless
$AUTOGRADER_ROOT says otherwise (tests use a fake tree).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .i18n import _, show, verbatim


def find_submitted(submission: Path, wanted: list[str]) -> dict[str, Path]:
    """File name -> the submitted file for each exercise file found anywhere in the submission: one in a folder
    called exercises/ (any capitalisation) first, then one at the top; anything under a solutions/ folder is ignored."""
    found: dict[str, tuple[int, Path]] = {}
    for p in sorted(submission.rglob("*.py")):
        rel = p.relative_to(submission)
        if p.name not in wanted or "solutions" in rel.parts[:-1] or not p.is_file():
            continue
        rank = 0 if p.parent.name.lower() == "exercises" else (1 if len(rel.parts) == 1 else 2)
        if p.name not in found or rank < found[p.name][0]:
            found[p.name] = (rank, p)
    return {name: p for name, (_rank, p) in found.items()}


def _fallback(path: Path, error: str, seconds: float) -> None:
    from .reports.exports import write_gradescope

    write_gradescope([], path, seconds, error=error)


def run(root: Path, judge_args: list[str]) -> int:
    """Grade <root>/submission with the judge in <root>/source and write <root>/results/results.json.

    Whatever goes wrong, a results.json is written (score 0 and the reason), so Gradescope never shows a
    bare 'autograder failed'."""
    start = time.perf_counter()
    results = root / "results" / "results.json"
    try:
        results.parent.mkdir(parents=True, exist_ok=True)
        if not (root / "source" / "exercises").is_dir():
            _fallback(results, _("The autograder upload is incomplete: {folder} is missing. Build the upload again "
                                 "with python judge.py gradescope-package autograder.zip and upload that zip.",
                                 folder=verbatim(root / "source" / "exercises")), time.perf_counter() - start)
            return 1
        return _run(root, judge_args, results, start)
    except Exception as exc:  # a results.json with the reason, whatever it was
        _fallback(results, _("The autograder failed before grading: {error}",
                             error=verbatim(f"{type(exc).__name__}: {exc}")), time.perf_counter() - start)
        return 1


def _run(root: Path, judge_args: list[str], results: Path, start: float) -> int:
    source, submission = root / "source", root / "submission"
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        work = Path(tmp) / "exercises"
        shutil.copytree(source / "exercises", work)  # stubs: a file not submitted grades as not attempted
        wanted = sorted(p.name for p in work.glob("ch[0-9][0-9]_*.py"))
        found = find_submitted(submission, wanted) if submission.is_dir() else {}
        for name, p in found.items():
            shutil.copyfile(p, work / name)
        print(f"Submitted exercise files: {', '.join(sorted(found)) or 'none'}", flush=True)
        if results.exists():
            results.unlink()
        proc = subprocess.run([sys.executable, str(source / "judge.py"), *judge_args, "--source", str(work),
                               "--gradescope", str(results)], cwd=tmp, capture_output=True, text=True)
        print(proc.stdout[-20000:], proc.stderr[-5000:], sep="\n", flush=True)
    try:
        json.loads(results.read_text(encoding="utf-8"))["tests"]
    except Exception:
        _fallback(results, _("The judge exited with code {code} without writing results.", code=proc.returncode)
                  + "\n" + verbatim((proc.stdout + proc.stderr)[-3000:]), time.perf_counter() - start)
        return 1
    if not found:
        data = json.loads(results.read_text(encoding="utf-8"))
        data["output"] = show(_("No exercise files were found in the submission (expected {files}, for example in "
                                "an exercises/ folder).", files=", ".join(wanted))) + "\n\n" + data["output"]
        results.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The Gradescope side of the judge.")
    p.add_argument("command", choices=["run"])
    p.add_argument("--root", default=os.environ.get("AUTOGRADER_ROOT", "/autograder"))
    args, rest = p.parse_known_args(argv)
    return run(Path(args.root), rest)


if __name__ == "__main__":
    sys.exit(main())
