"""Inputs shared by several chapters' checks, built once per process."""
from __future__ import annotations

import threading
from functools import lru_cache

import torch

CAT_PROMPT = "The cat sat on the"


_course_model_lock = threading.Lock()


def course_model():
    """(model, tokenizer) of the course model, loaded once per process (the judge grades chapters in threads)."""
    with _course_model_lock:
        return _load_course_model_once()


@lru_cache(maxsize=1)
def _load_course_model_once():
    from lesson_utils import load_course_model

    return load_course_model(verbose=False)


def course_embedding() -> torch.Tensor:
    """The course model's embedding matrix E, [V, d] (a detached view, not a copy)."""
    return course_model()[0].get_input_embeddings().weight.detach()


def course_ids(text: str = CAT_PROMPT) -> torch.Tensor:
    """Token ids of `text` under the course tokenizer, shape [T]."""
    return course_model()[1](text, return_tensors="pt").input_ids[0]


def random_table(vocab: int, dim: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A [vocab, dim] table of standard normal values, deterministic for a seed."""
    return torch.randn(vocab, dim, generator=torch.Generator().manual_seed(seed)).to(dtype)


def random_ids(vocab: int, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Integer ids in [0, vocab), deterministic for a seed."""
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))
