"""course.py: torch from the CPU index on Linux, and JupyterLab on the course folder with the course's Python."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import course  # noqa: E402
from live_jupyter import api, free_port, running_server  # noqa: E402


def test_linux_asks_the_cpu_index_first_and_falls_back_to_pypi(monkeypatch, capsys):
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        if "--index-url" in cmd:
            raise subprocess.CalledProcessError(1, cmd)  # the index cannot be reached

    monkeypatch.setattr(course, "run", fake_run)
    monkeypatch.setattr(course.sys, "platform", "linux")
    course.install_torch(["pip", "install"])
    assert calls[0] == ["pip", "install", "--index-url", course.TORCH_CPU_INDEX, "--timeout", "20", "--retries", "1",
                        course.TORCH]
    assert calls[1] == ["pip", "install", course.TORCH]
    assert "CUDA build" in capsys.readouterr().out  # the learner is told what the fallback costs


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_macos_and_windows_take_pypi(monkeypatch, platform):
    calls = []
    monkeypatch.setattr(course, "run", lambda cmd, **kw: calls.append(cmd))
    monkeypatch.setattr(course.sys, "platform", platform)
    course.install_torch(["pip", "install"])
    assert calls == [["pip", "install", course.TORCH]]


def test_setup_reports_the_torch_build_it_installed():
    line = course.torch_build(course.venv_python())
    import torch

    assert line.startswith(f"torch {torch.__version__}, ")
    assert ("CPU build" in line) == (torch.version.cuda is None)


def test_lab_is_rooted_at_the_course_and_passes_arguments_through():
    cmd = course.lab_command(Path("py"), ["--no-browser", "--port", "8890"])
    assert f"--ServerApp.root_dir={course.ROOT}" in cmd
    assert cmd[cmd.index("--no-browser"):cmd.index("--no-browser") + 3] == ["--no-browser", "--port", "8890"]
    assert cmd[-1] == str(Path("notebooks") / "00_pipeline.ipynb")
    own = course.lab_command(Path("py"), ["notebooks/04_softmax_sampling.ipynb"])
    assert [a for a in own if a.endswith(".ipynb")] == ["notebooks/04_softmax_sampling.ipynb"]


def test_venv_env_puts_the_course_python_first():
    env = course.venv_env({"PATH": "/usr/bin", "PYTHONHOME": "/elsewhere"})
    assert env["PATH"].split(os.pathsep)[0] == str(course.venv_python().parent)
    assert env["VIRTUAL_ENV"] == str(course.VENV) and "PYTHONHOME" not in env


def _kernel_output(ws, code: str, timeout_s: float = 60) -> str:
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex, "msg_type": "execute_request",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    }))
    out, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return "".join(out)


def _terminal_output(ws, line: str, marker: str, timeout_s: float = 60) -> str:
    ws.send(json.dumps(["stdin", line + "\r"]))
    out, deadline = "", time.monotonic() + timeout_s
    while time.monotonic() < deadline and marker not in out:  # the marker is only in the answer, not the echo
        msg = json.loads(ws.recv())
        if msg[0] == "stdout":
            out += msg[1]
    return out


@pytest.mark.skipif(os.name == "nt", reason="Lab terminals on Windows run PowerShell")
def test_make_lab_opens_the_course_root_and_its_terminals_and_shell_commands_use_the_venv(tmp_path):
    """A real `python course.py lab`: the file browser sees exercises/, and `!python` and a terminal run .venv's Python."""
    import websocket

    port, token = free_port(), uuid.uuid4().hex
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               PATH="/usr/bin:/bin")  # as a learner's shell: the venv not activated
    env.pop("VIRTUAL_ENV", None)
    cmd = [sys.executable, str(REPO / "course.py"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           f"--IdentityProvider.token={token}"]
    with running_server(cmd, port, token, cwd=tmp_path, env=env) as base:
        names = {item["name"] for item in api(base, token, "/api/contents/")["content"]}
        assert {"notebooks", "exercises", "judge.py"} <= names
        assert api(base, token, "/api/contents/exercises/ch04_sampling.py?content=0")["type"] == "file"

        venv_prefix = str(course.VENV)
        kernel = api(base, token, "/api/kernels", "POST", {"name": "python3"})
        ws = websocket.create_connection(f"ws://127.0.0.1:{port}/api/kernels/{kernel['id']}/channels?token={token}",
                                         timeout=60)
        try:
            text = _kernel_output(ws, "!python -c \"import sys, torch; print('PREFIX=' + sys.prefix)\"")
        finally:
            ws.close()
        assert f"PREFIX={venv_prefix}" in text, text

        term = api(base, token, "/api/terminals", "POST", {})
        ws = websocket.create_connection(f"ws://127.0.0.1:{port}/terminals/websocket/{term['name']}?token={token}",
                                         timeout=60)
        try:
            text = _terminal_output(ws, "python -c \"import sys, torch; print('PREFIX=' + sys.prefix + '.')\"",
                                    f"PREFIX={venv_prefix}.")
        finally:
            ws.close()
        assert f"PREFIX={venv_prefix}." in text, text
