"""The sandboxed side of grading: imports the learner's file and calls their functions.

Run as `python -m grading.child REQUEST.json`. Only the learner's *outputs* leave
this process, saved with torch.save into the result folder; the judge reads them
back with `weights_only=True` and compares them with its own references. Nothing
this process prints, patches or returns as an object can make a case pass.
"""
from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

ALLOWED_SCALARS = (bool, int, float, str, type(None))


class UnsafeOutput(TypeError):
    pass


def plain(value, path="result"):
    """Copy `value` into plain tensors, numbers, strings, tuples, lists and dicts, or raise UnsafeOutput."""
    import torch

    if type(value) in ALLOWED_SCALARS:
        return value
    if isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter):
        t = value.detach().cpu()
        # A tensor that covers its whole storage is sent as is, so tensors that share one storage
        # (tied weights) still share it on the judge side; a view into a larger storage is copied.
        whole = t.untyped_storage().nbytes() == t.numel() * t.element_size() and t.is_contiguous()
        return t if whole else t.clone()
    if isinstance(value, tuple) and type(value).__module__ == "torch.return_types":  # e.g. topk's (values, indices)
        value = tuple(value)
    if type(value) in (tuple, list):
        return type(value)(plain(v, f"{path}[{i}]") for i, v in enumerate(value))
    if type(value) is dict:
        return {plain(k, f"{path} key"): plain(v, f"{path}[{k!r}]") for k, v in value.items()}
    if type(value) is torch.Size:
        return tuple(int(s) for s in value)
    if type(value) is torch.dtype:
        return str(value)
    raise UnsafeOutput(f"{path} is a {type(value).__module__}.{type(value).__qualname__}; "
                       "return tensors, numbers, strings or tuples/lists/dicts of them.")


def learner_traceback(exc: BaseException, learner_file: str) -> str:
    """The traceback restricted to frames in the learner's own file, plus the error line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == learner_file]
    lines = traceback.format_list(frames)
    text = "".join(lines) + "".join(traceback.format_exception_only(type(exc), exc))
    return text.strip()


def limit_resources(memory_mb: int) -> None:
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the time limit still applies
        return
    limit = memory_mb * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def guard_learner(blocked: list[str]) -> None:
    """Refuse file access inside the reference-solution folders, and starting other programs.

    Audit hooks cannot be removed once added. This stops the usual ways of reading the answers
    (open, import, listing, `cat` in a subprocess); it is not a sandbox against native code.
    """
    roots = [os.path.realpath(b) + os.sep for b in blocked]
    spawning = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "pty.spawn")

    def hook(event, args):
        if event in spawning:
            raise PermissionError("Starting other programs is not allowed while grading.")
        if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                p = os.path.realpath(os.fsdecode(args[0])) + os.sep
            except (TypeError, ValueError):
                return
            if any(p.startswith(r) for r in roots):
                raise PermissionError("Reading the reference solutions is not allowed while grading.")

    sys.addaudithook(hook)


def main(request_path: str) -> None:
    req = json.loads(Path(request_path).read_text(encoding="utf-8"))
    out = Path(req["out_dir"])
    limit_resources(req["memory_mb"])
    import torch

    from grading.protocols import PROTOCOLS

    torch.set_num_threads(req.get("threads", 1))
    chapter = importlib.import_module(f"grading.{req['chapter_module']}").CHAPTER
    by_name = {e.name: e for e in chapter.exercises}

    # The chapter's checks hold the references: keep the loaded copy for building inputs, but take it out
    # of sys.modules and refuse its files, so the learner's code cannot simply import them.
    grading_dir = Path(__file__).resolve().parent
    for loaded in [m for m in sys.modules if m.startswith("grading.ch")]:
        del sys.modules[loaded]
    check_files = [str(p) for p in grading_dir.glob("ch[0-9][0-9]_*.py")] + [str(grading_dir / "__pycache__")]
    guard_learner(req["blocked_dirs"] + check_files)
    learner_file = os.path.abspath(req["learner_file"])
    try:
        spec = importlib.util.spec_from_file_location(f"learner_{req['chapter_module']}", learner_file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException as exc:  # SyntaxError, SystemExit, anything at import time
        (out / "import_error.txt").write_text(
            f"Importing {Path(learner_file).name} failed:\n{learner_traceback(exc, learner_file) or repr(exc)}",
            encoding="utf-8")
        return

    for name in req["exercises"]:
        exercise = by_name[name]
        # Inputs are built before the clock starts, and each case gets its own deep copy, so code that
        # modifies its arguments in place cannot change the inputs of later cases.
        prepared = [case.make_inputs() for case in exercise.cases]
        (out / f"{name}.started").touch()
        fn = getattr(module, "QUIZ" if exercise.is_quiz else name, None)
        results = []
        for case, shared_inputs in zip(exercise.cases, prepared):
            entry = {"name": case.name}
            if results and results[-1].get("error_type") == "MemoryError":
                results.append({**entry, "error": "skipped: the previous case ran out of memory",
                                "error_type": "MemoryError", "seconds": 0.0})
                continue
            start = time.perf_counter()
            try:
                if fn is None:
                    raise NotImplementedError(f"{Path(learner_file).name} has no {name}")
                inputs = copy.deepcopy(shared_inputs)
                start = time.perf_counter()  # time the learner's code only
                output = PROTOCOLS[case.call](fn, inputs)
                entry["seconds"] = time.perf_counter() - start
                entry["output"] = plain(output)
            except NotImplementedError:
                entry["not_implemented"] = True
            except UnsafeOutput as exc:
                entry["error"] = f"Your function returned something the judge cannot read: {exc}"
            except BaseException as exc:  # includes SystemExit and KeyboardInterrupt from learner code
                entry["error"] = learner_traceback(exc, learner_file) or f"{type(exc).__name__}: {exc}"
                entry["error_type"] = type(exc).__name__
            entry.setdefault("seconds", time.perf_counter() - start)
            results.append(entry)
        tmp = out / f"{name}.tmp"
        torch.save(results, tmp)
        os.replace(tmp, out / f"{name}.pt")


if __name__ == "__main__":
    main(sys.argv[1])
