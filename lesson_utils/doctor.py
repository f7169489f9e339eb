"""Environment check shared by notebook 00 and `python judge.py doctor`, in the course's language (a Chinese
notebook, --lang zh, GRADING_LANG or the locale: lesson_utils/edition.py)."""
from __future__ import annotations

import importlib.metadata as md
import platform
import sys
from typing import Callable, Iterable, NamedTuple

from .display import short_path
from .edition import N_, _

REQUIRED = ("torch", "transformers", "safetensors", "gguf", "numpy", "matplotlib", "scikit-learn")
PROMPT = "The cat sat on the"  # the model's input, shown as is in every language
JUDGE_CHECKS = (N_("judge sandbox"), N_("judge backend"))  # the names of the checks judge.py adds (`extra`)


class Check(NamedTuple):
    name: str  # English, marked with N_ where it is a phrase: shown translated by print_doctor
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
                    else _("Python 3.11+ is needed (the pinned numpy has no wheel for older versions)."))]
    for dist in REQUIRED:
        v = _version(dist)
        checks.append(Check(dist, v is not None, v or _("missing: run `python course.py setup` or pip install {name}",
                                                        name=dist)))
    try:
        import torch

        cuda_build = torch.version.cuda is not None
        build = _("CUDA {cuda} build", cuda=torch.version.cuda) if cuda_build else _("CPU build")
        checks.append(Check(N_("torch build"), True, _("{build}, {n} threads", build=build,
                                                       n=torch.get_num_threads())))
    except Exception as exc:
        checks.append(Check(N_("torch build"), False, _("torch does not import: {error}", error=exc)))
        return checks

    checks += [make() for make in extra]

    from .course_model import (CourseModelError, cache_is_valid, course_model_dir, embeddings_are_tied,
                               find_course_gguf, load_course_model, verify_gguf)

    try:
        gguf = find_course_gguf()
        verify_gguf(gguf)
        checks.append(Check(N_("course model file"), True, _("{name}, sha256 verified", name=gguf.name)))
    except CourseModelError as exc:
        checks.append(Check(N_("course model file"), False, str(exc)))
        return checks
    folder = course_model_dir()
    state = _("ready") if cache_is_valid(folder) else _("built on first load")
    checks.append(Check(N_("model cache"), True, _("{folder} ({state})", folder=short_path(folder), state=state)))
    if load_model:
        try:
            model, tok = load_course_model(verbose=False)
            cfg = model.config
            ids = tok(PROMPT, return_tensors="pt").input_ids
            with torch.no_grad():
                top = model(ids).logits[0, -1].topk(3).indices.tolist()
            ok = embeddings_are_tied(model) and cfg.num_hidden_layers == 30 and cfg.vocab_size == 49152
            checks.append(Check(N_("course model loads"), ok, _(
                "{layers} layers, d={d}, V={vocab}, tied={tied}; {prompt!r} -> {top}", layers=cfg.num_hidden_layers,
                d=cfg.hidden_size, vocab=cfg.vocab_size, tied=embeddings_are_tied(model), prompt=PROMPT,
                top=[tok.decode(i) for i in top])))
        except Exception as exc:
            checks.append(Check(N_("course model loads"), False, f"{type(exc).__name__}: {exc}"))
    return checks


def print_doctor(load_model: bool = True, extra: Iterable[Callable[[], Check]] = ()) -> bool:
    """Print the checks as a list; True when all passed."""
    checks = run_checks(load_model, extra)
    for c in checks:
        mark = _("ok") if c.ok else _("FAIL")
        print(f"[{mark}] {_pad(_(c.name), 18)} {c.detail}")
    ok = all(c.ok for c in checks)
    print(_("Everything is ready.") if ok else
          _("Fix the {fail} lines above, then run `python judge.py doctor` again.", fail=_("FAIL")))
    return ok


def _pad(text: str, width: int) -> str:
    """`text` padded to `width` columns on a console, where a Chinese character takes two."""
    import unicodedata

    used = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(0, width - used)
