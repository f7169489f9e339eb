"""Committed notebooks open clean in Jupyter and show no machine paths.

JupyterLab rewrites a notebook's metadata when its kernel starts (kernelspec from the installed
kernel, language_info from the kernel's reply) and autosave then writes the file back through the
server's contents API. If either differs from what is committed, the learner's copy is modified
the moment it opens, and their next `git pull` conflicts.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from live_jupyter import api, free_port, running_server

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

# Absolute paths that only exist on one machine: home folders, this work tree, a venv, temp folders.
MACHINE_PATH = re.compile(
    r"(/root/|/home/[A-Za-z]|/Users/[A-Za-z]|[A-Za-z]:\\\\Users\\\\|/work/|/tmp/|/private/var/|/opt/|/[\w./-]*\.venv/)"
)


def _outputs_text(nb: dict) -> str:
    return json.dumps([c.get("outputs", []) for c in nb["cells"] if c["cell_type"] == "code"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_absolute_machine_path_in_committed_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    found = sorted(set(MACHINE_PATH.findall(_outputs_text(nb))))
    assert not found, f"{path.name} shows machine paths {found}: print paths relative to the course folder or with ~"


def test_machine_path_pattern_catches_the_usual_suspects():
    for text in ["/root/.cache/llm-course", "/home/ana/course", "/Users/bo/x", r"C:\\Users\\bo",
                 "/work/main/.venv/bin/python", "/tmp/judge-x", "/srv/x/.venv/lib"]:
        assert MACHINE_PATH.search(text), text
    for text in ["~/.cache/llm-course", "notebooks/00_pipeline.ipynb", ".venv/bin/python", "3/4 done"]:
        assert not MACHINE_PATH.search(text), text


def test_kernel_metadata_is_what_jupyter_writes_on_open():
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import start_new_kernel

    spec = KernelSpecManager().get_kernel_spec("python3")
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.kernel_info()
        reply = kc.get_shell_msg(timeout=60)
        language_info = reply["content"]["language_info"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    for path in NOTEBOOKS:
        meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]
        assert meta.get("kernelspec") == {"display_name": spec.display_name, "language": spec.language,
                                          "name": "python3"}, path.name
        assert meta.get("language_info") == language_info, (
            f"{path.name}: language_info {meta.get('language_info')} != the kernel's {language_info}; "
            "re-execute it with `jupyter nbconvert --to notebook --execute --inplace`")


def test_saving_through_the_jupyter_server_leaves_every_notebook_byte_identical(tmp_path):
    """Open (GET) and autosave (PUT) each notebook through a real Jupyter server's contents API."""
    root = tmp_path / "course"
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    port, token = free_port(), "test-token"
    cmd = [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    with running_server(cmd, port, token, env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))) as base:
        for path in NOTEBOOKS:
            rel = f"notebooks/{path.name}"
            model = api(base, token, f"/api/contents/{rel}?type=notebook&content=1")
            api(base, token, f"/api/contents/{rel}", "PUT",
                {"type": "notebook", "format": "json", "content": model["content"]})
            assert (root / rel).read_bytes() == path.read_bytes(), (
                f"{path.name} changes when Jupyter saves it: write it with nbformat (nbconvert --inplace does)")
