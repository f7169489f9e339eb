"""Loading any other Hugging Face causal LM (GPT-2, Qwen3-0.6B, ...) by name or local path."""
from __future__ import annotations

import os
from pathlib import Path

import torch

from .edition import _


class ModelNotAvailable(RuntimeError):
    """The model is neither on disk nor downloadable right now; the message says how to get it."""


def _how_to_get(name: str) -> str:
    return _(
        "The model {name!r} is not in your Hugging Face cache and cannot be downloaded now "
        "(offline, or HF_HUB_OFFLINE=1).\n"
        "To use it, on a machine with internet run:\n"
        "    hf download {name}\n"
        "then either work on that machine, copy its ~/.cache/huggingface/hub folder to the same "
        "place on this one, or pass the downloaded folder's path: load_model('/path/to/folder').\n"
        "Every chapter runs without it: the course model comes from `load_course_model()`.", name=name)


def _from_pretrained(name: str, local_only: bool, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=local_only)
    model = AutoModelForCausalLM.from_pretrained(name, local_files_only=local_only, dtype=dtype)
    return model.eval(), tokenizer


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def load_model(name_or_path: str | os.PathLike, dtype: torch.dtype = torch.float32):
    """Load `(model, tokenizer)` for any causal LM by hub name or local folder.

    Tries the local folder or the Hugging Face cache first, then the network unless
    HF_HUB_OFFLINE=1. Raises ModelNotAvailable with instructions, never a raw hub error.
    """
    name = str(name_or_path)
    if Path(name).expanduser().is_dir():
        return _from_pretrained(str(Path(name).expanduser()), True, dtype)
    try:
        return _from_pretrained(name, True, dtype)
    except (OSError, ValueError) as local_error:
        if _offline():
            raise ModelNotAvailable(_how_to_get(name)) from local_error
    try:
        return _from_pretrained(name, False, dtype)
    except Exception as online_error:  # hub, HTTP and connection errors come in many types
        raise ModelNotAvailable(_how_to_get(name)) from online_error


def model_available(name_or_path: str | os.PathLike) -> bool:
    """True when `load_model(name_or_path)` would succeed without the network."""
    name = str(name_or_path)
    if Path(name).expanduser().is_dir():
        return (Path(name).expanduser() / "config.json").is_file()
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
        return isinstance(found, str)
    except Exception:
        return False


def try_load_model(name_or_path: str | os.PathLike, dtype: torch.dtype = torch.float32):
    """`load_model` for optional notebook cells: returns None and prints how to get the model."""
    if not model_available(name_or_path):
        print(_how_to_get(str(name_or_path)))
        return None
    try:
        return load_model(name_or_path, dtype=dtype)
    except ModelNotAvailable as exc:
        print(exc)
        return None
