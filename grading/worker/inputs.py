"""What case inputs are made of, importable in the sandbox (they hold no answers): the course model and its
embedding matrix (loaded once per process, in the judge and in the worker), and the classes inputs are
instances of. Inputs are pickled in the judge and unpickled in the worker, which never loads a chapter's checks,
so a class an input is an instance of must live here (or in torch, transformers or lesson_utils), never in
grading/checks/.
"""
from __future__ import annotations

import threading
from functools import lru_cache

import torch
from torch import nn

_course_model_lock = threading.Lock()


def course_model():
    """(model, tokenizer) of the course model, loaded once per process (the judge grades chapters in threads)."""
    with _course_model_lock:
        return _load_course_model_once()


@lru_cache(maxsize=1)
def _load_course_model_once():
    from lesson_utils import load_course_model

    return load_course_model(verbose=False)


@lru_cache(maxsize=1)
def course_embedding() -> torch.Tensor:
    """The course model's embedding matrix E, [V, d], read straight from the cached safetensors file.

    Checks that need only E (and token ids) skip importing transformers and building the model,
    which keeps grading them to a few seconds.
    """
    from safetensors import safe_open

    from lesson_utils.course_model import ensure_course_model

    with safe_open(ensure_course_model(verbose=False) / "model.safetensors", framework="pt") as f:
        return f.get_tensor("model.embed_tokens.weight")


def course_model_loaded() -> bool:
    """Whether this process has loaded the course model (then inputs that hold it travel by name)."""
    return bool(_load_course_model_once.cache_info().currsize)


def course_embedding_loaded() -> bool:
    """Whether this process has read the course model's embedding matrix E."""
    return bool(course_embedding.cache_info().currsize)


class SharedStorageParameters(torch.nn.Module):
    """Two distinct Parameters that view one storage: a fused [rows, cols] weight and a Parameter made from its
    lower half (as when a fused matrix is exposed in parts). They are two parameters, counted separately.

    Pickling or deep-copying a module copies each Parameter on its own, which would split the shared storage,
    so this module is rebuilt from its arguments instead: the sharing survives the trip to the learner's process.
    """

    def __init__(self, rows: int = 6, cols: int = 4, seed: int = 0):
        super().__init__()
        self.args = (rows, cols, seed)
        fused = torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed))
        self.fused = torch.nn.Parameter(fused)
        self.lower = torch.nn.Parameter(fused[rows // 2:])

    def __reduce__(self):
        return (type(self), self.args)


class TinyLM(nn.Module):
    """Embedding -> MLP block -> LayerNorm -> head, optionally tied (chapter 03's parameter counts)."""

    def __init__(self, V: int, d: int, tied: bool):
        super().__init__()
        self.embed = nn.Embedding(V, d)
        self.block = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, V, bias=False)
        if tied:
            self.head.weight = self.embed.weight
