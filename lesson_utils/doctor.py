"""Environment check shared by notebook 00 and `python judge.py doctor`."""
from __future__ import annotations

import importlib.metadata as md
import platform
import sys
from typing import Callable, Iterable, NamedTuple

from .display import short_path

REQUIRED = ("torch", "transformers", "safetensors", "gguf", "numpy", "matplotlib", "scikit-learn")


class Check(NamedTuple):
    name: str
    ok: bool
    detail: str


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def run_checks(load_model: bool = True, extra: Iterable[Callable[[], Check]] = ()) -> list[Check]:
    """Every check, in order; a failed check's detail says what to do.

    `extra`: more checks, run after torch imports (the judge adds its sandbox: lesson_utils never imports grading)."""
    checks = [Check("python", sys.version_info >= (3, 11),
                    f"{platform.python_version()} ({short_path(sys.executable)})" if sys.version_info >= (3, 11)
                    else "Python 3.11+ is needed (the pinned numpy has no wheel for older versions).")]
    for dist in REQUIRED:
        v = _version(dist)
        checks.append(Check(dist, v is not None, v or f"missing: run `python course.py setup` or pip install {dist}"))
    try:
        import torch

        cuda_build = torch.version.cuda is not None
        checks.append(Check("torch build", True, f"{'CUDA ' + torch.version.cuda if cuda_build else 'CPU'} build, "
                                                 f"{torch.get_num_threads()} threads"))
    except Exception as exc:
        checks.append(Check("torch build", False, f"torch does not import: {exc}"))
        return checks

    checks += [make() for make in extra]

    from .course_model import (CourseModelError, cache_is_valid, course_model_dir, embeddings_are_tied,
                               find_course_gguf, load_course_model, verify_gguf)

    try:
        gguf = find_course_gguf()
        verify_gguf(gguf)
        checks.append(Check("course model file", True, f"{gguf.name}, sha256 verified"))
    except CourseModelError as exc:
        checks.append(Check("course model file", False, str(exc)))
        return checks
    folder = course_model_dir()
    checks.append(Check("model cache", True, f"{short_path(folder)} ({'ready' if cache_is_valid(folder) else 'built on first load'})"))
    if load_model:
        try:
            model, tok = load_course_model(verbose=False)
            cfg = model.config
            ids = tok("The cat sat on the", return_tensors="pt").input_ids
            with torch.no_grad():
                top = model(ids).logits[0, -1].topk(3).indices.tolist()
            ok = embeddings_are_tied(model) and cfg.num_hidden_layers == 30 and cfg.vocab_size == 49152
            checks.append(Check("course model loads", ok, f"{cfg.num_hidden_layers} layers, d={cfg.hidden_size}, "
                                                          f"V={cfg.vocab_size}, tied={embeddings_are_tied(model)}; "
                                                          f"'The cat sat on the' -> {[tok.decode(i) for i in top]}"))
        except Exception as exc:
            checks.append(Check("course model loads", False, f"{type(exc).__name__}: {exc}"))
    return checks


def print_doctor(load_model: bool = True, extra: Iterable[Callable[[], Check]] = ()) -> bool:
    """Print the checks as a list; True when all passed."""
    checks = run_checks(load_model, extra)
    for c in checks:
        print(f"[{'ok' if c.ok else 'FAIL'}] {c.name:<18} {c.detail}")
    ok = all(c.ok for c in checks)
    print("Everything is ready." if ok else "Fix the FAIL lines above, then run `python judge.py doctor` again.")
    return ok
