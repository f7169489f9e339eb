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
    monkeypatch.delenv("TORCH_INDEX_URL", raising=False)
    course.install_torch(["pip", "install"])
    assert calls[0] == ["pip", "install", "--index-url", course.TORCH_CPU_INDEX, "--timeout", "20", "--retries", "1",
                        course.TORCH]
    assert calls[1] == ["pip", "install", course.TORCH]
    assert "CUDA build" in capsys.readouterr().out  # the learner is told what the fallback costs


def test_torch_index_url_replaces_the_cpu_index_and_the_fallback_stays(monkeypatch):
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        if "--index-url" in cmd:
            raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(course, "run", fake_run)
    monkeypatch.setattr(course.sys, "platform", "linux")
    monkeypatch.setenv("TORCH_INDEX_URL", "https://mirror.example/pytorch/whl/cpu")
    course.install_torch(["pip", "install"])
    assert calls[0][2:4] == ["--index-url", "https://mirror.example/pytorch/whl/cpu"]
    assert calls[1] == ["pip", "install", course.TORCH]  # then pip's own index: PIP_INDEX_URL's mirror


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


def test_test_without_notebooks_runs_pytest_only(monkeypatch):
    calls = []
    monkeypatch.setattr(course, "setup", lambda: Path("py"))
    monkeypatch.setattr(course, "prepare_model", lambda py: None)
    monkeypatch.setattr(course, "default_backend_forks", lambda: False)  # as on macOS and Windows
    monkeypatch.setattr(course.subprocess, "run",
                        lambda cmd, **kw: calls.append((cmd, kw)) or subprocess.CompletedProcess(cmd, 0))
    assert course.test(notebooks=False) == 0
    (cmd, kw), = calls
    assert cmd[:3] == ["py", "-m", "pytest"] and cmd[-1] == "tests" and not any("nbval" in a for a in cmd)
    assert kw["cwd"] == course.ROOT and kw["env"]["HF_HUB_OFFLINE"] == "1"


def test_linux_runs_the_judge_a_second_time_without_fork(monkeypatch):
    calls, passes = [], []
    monkeypatch.setattr(course, "setup", lambda: Path("py"))
    monkeypatch.setattr(course, "prepare_model", lambda py: None)
    monkeypatch.setattr(course, "default_backend_forks", lambda: True)
    monkeypatch.setattr(course, "notebook_passes", lambda py, env: passes.append(env) or [0, 0])
    monkeypatch.setattr(course.subprocess, "run",
                        lambda cmd, **kw: calls.append((cmd, kw)) or subprocess.CompletedProcess(cmd, 0))
    assert course.test() == 0
    assert len(calls) == 2 and len(passes) == 1
    cmd, kw = calls[1]
    assert cmd[:3] == ["py", "-m", "pytest"] and "tests/test_spawn_backend.py" in cmd
    assert "tests/test_sandbox.py" in cmd and not any("nbval" in a for a in cmd)
    assert kw["env"]["GRADING_BACKEND"] == "spawn" and kw["env"]["GRADING_SANDBOX"] == "none"
    no_fork = kw["env"]["PYTHONPATH"].split(os.pathsep)[0]
    assert (Path(no_fork) / "sitecustomize.py").is_file()
    monkeypatch.undo()
    done = subprocess.run([sys.executable, "-c", "import os; print(hasattr(os, 'fork'))"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHONPATH=no_fork))
    assert done.stdout.strip() == "False"  # the second run really has no fork


def test_a_failing_step_fails_the_suite(monkeypatch):
    monkeypatch.setattr(course, "setup", lambda: Path("py"))
    monkeypatch.setattr(course, "prepare_model", lambda py: None)
    monkeypatch.setattr(course, "default_backend_forks", lambda: False)
    monkeypatch.setattr(course, "notebook_passes", lambda py, env: [0, 1])  # only the portable pass fails
    monkeypatch.setattr(course.subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0))
    assert course.test() == 1


def test_notebook_passes_run_both_kernel_sets_at_once_and_print_each_whole(monkeypatch, capsys):
    started = []

    class FakeRun:
        def __init__(self, cmd, env, stdout, **kw):
            started.append(env)
            stdout.write(f"pass {len(started)}: {env.get('ATEN_CPU_CAPABILITY', 'native')}\n")
            self.code = len(started) - 1

        def wait(self):
            assert len(started) == 2  # the second pass was started before the first one was waited for
            return self.code

    monkeypatch.setattr(course.subprocess, "Popen", FakeRun)
    assert course.notebook_passes(Path("py"), {"HF_HUB_OFFLINE": "1"}) == [0, 1]
    out = capsys.readouterr().out
    assert "pass 1: native" in out and "pass 2: default" in out and out.index("pass 1") < out.index("pass 2")
    assert "ATEN_CPU_CAPABILITY" not in started[0] and started[1]["ATEN_CPU_CAPABILITY"] == "default"
    assert all(env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "1" for env in started)  # no crowding


def test_unknown_test_arguments_are_refused(monkeypatch, capsys):
    monkeypatch.setattr(course.sys, "argv", ["course.py", "test", "--no-notebook"])
    monkeypatch.setattr(course, "test", lambda notebooks=True: pytest.fail("ran the tests"))
    assert course.main() == 2
    assert "--no-notebooks" in capsys.readouterr().out


def test_setup_with_more_words_is_refused_not_run(monkeypatch, capsys):
    monkeypatch.setattr(course.sys, "argv", ["course.py", "setup", "--no-notebooks"])
    monkeypatch.setattr(course, "setup", lambda: pytest.fail("ran setup, leaving out what it was given"))
    assert course.main() == 2
    assert "python course.py setup" in capsys.readouterr().out


ODD_FOLDER = "it's my course (A & B)"  # spaces, a quote, parentheses and an ampersand


def test_windows_lab_terminals_run_powershell_with_the_venv_first(monkeypatch, tmp_path):
    """On Windows the terminal is PowerShell; its profile (conda init) runs first, then .venv\\Scripts goes first."""
    venv = tmp_path / ODD_FOLDER / ".venv"
    monkeypatch.setattr(course, "VENV", venv)
    with monkeypatch.context() as windows:  # undone before pytest's own paths are made again
        windows.setattr(course.os, "name", "nt")
        assert course.venv_python() == venv / "Scripts/python.exe"
        config_file = course.write_lab_config()
    config = json.loads(config_file.read_text(encoding="utf-8"))
    shell = config["ServerApp"]["terminado_settings"]["shell_command"]
    assert shell[:4] == ["powershell.exe", "-NoLogo", "-NoExit", "-Command"] and "-NoProfile" not in shell
    script = shell[4]
    quoted = "'" + str(venv / "Scripts").replace("'", "''") + ";'"
    assert f"$env:PATH = {quoted} + $env:PATH" in script, script
    # Without a double quote inside, subprocess.list2cmdline (what pywinpty uses) only wraps the script in quotes.
    assert '"' not in script
    assert subprocess.list2cmdline(shell).endswith(f' "{script}"')


def test_windows_lab_waits_for_jupyter_through_ctrl_c(monkeypatch, tmp_path):
    """Without exec, the first Ctrl+C reaches JupyterLab (which asks to confirm) and course.py keeps waiting for it."""
    waits, started = [], []

    class Server:
        def __init__(self, cmd, **kw):
            started.append((cmd, kw))

        def wait(self):
            waits.append(1)
            if len(waits) == 1:
                raise KeyboardInterrupt
            return 0

    monkeypatch.setattr(course, "VENV", tmp_path / ODD_FOLDER / ".venv")
    monkeypatch.setattr(course, "setup", lambda: course.venv_python())
    monkeypatch.setattr(course, "prepare_model", lambda py: None)
    monkeypatch.setattr(course.os, "execve", lambda *a: pytest.fail("exec on Windows"))
    monkeypatch.setattr(course.subprocess, "Popen", Server)
    with monkeypatch.context() as windows:  # undone before pytest's own paths are made again
        windows.setattr(course.os, "name", "nt")
        course.lab(["--no-browser"])
    (cmd, kw), = started
    assert len(waits) == 2 and kw["cwd"] == course.ROOT
    assert cmd[0] == str(tmp_path / ODD_FOLDER / ".venv" / "Scripts/python.exe")
    assert kw["env"]["PATH"].split(os.pathsep)[0] == str(tmp_path / ODD_FOLDER / ".venv" / "Scripts")


@pytest.mark.skipif(os.name == "nt", reason="bash terminals are the POSIX case")
def test_bash_terminal_activates_a_venv_in_a_folder_with_spaces_and_quotes(monkeypatch, tmp_path):
    venv = tmp_path / ODD_FOLDER / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    monkeypatch.setattr(course, "VENV", venv)
    shell = course.terminal_command()
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text('export PATH="/usr/bin:$PATH"\n', encoding="utf-8")  # as conda init would
    done = subprocess.run(shell, input="command -v python; exit\n", capture_output=True, text=True, timeout=60,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin", "TERM": "dumb"})
    assert f"{venv}/bin/python" in done.stdout.splitlines(), done.stdout + done.stderr


def test_course_py_prints_any_path_on_a_cp1252_console(tmp_path):
    """A Windows console in cp1252 and a user folder in Chinese: course.py's own prints replace what they cannot show."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import course; course.console_safe(); "
            "course.run([sys.executable, '-c', 'pass', 'C:\\\\Users\\\\\u5f20\u4e09\\\\my course'])")
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    done = subprocess.run([sys.executable, "-c", code, str(REPO)], capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode("cp1252", "replace")
    assert b"C:\\Users\\??\\my course" in done.stdout
    helped = subprocess.run([sys.executable, str(REPO / "course.py"), "help"], capture_output=True, env=env,
                            timeout=60)
    assert helped.returncode == 0 and b"python course.py lab" in helped.stdout


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
