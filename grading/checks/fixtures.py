"""How the checks build case inputs: seeded random tensors and ids, the course model, its tokenizer and E, tiny
models. Judge side only (they run in the judge's process; what travels to the worker is in grading/worker/)."""
from __future__ import annotations

from functools import lru_cache

import torch

from ..worker.inputs import SharedStorageParameters, TinyLM, course_embedding, course_model  # noqa: F401

CAT_PROMPT = "The cat sat on the"


@lru_cache(maxsize=1)
def _course_tokenizer():
    from tokenizers import Tokenizer

    from lesson_utils.course_model import ensure_course_model

    return Tokenizer.from_file(str(ensure_course_model(verbose=False) / "tokenizer.json"))


def course_ids(text: str = CAT_PROMPT) -> torch.Tensor:
    """Token ids of `text` under the course tokenizer (the same ids as the model's AutoTokenizer), shape [T]."""
    return torch.tensor(_course_tokenizer().encode(text).ids, dtype=torch.long)


def random_table(vocab: int, dim: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A [vocab, dim] table of standard normal values, deterministic for a seed."""
    return torch.randn(vocab, dim, generator=torch.Generator().manual_seed(seed)).to(dtype)


def random_ids(vocab: int, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Integer ids in [0, vocab), deterministic for a seed."""
    return torch.randint(0, vocab, shape, generator=torch.Generator().manual_seed(seed))


def token_id(text: str) -> int:
    """The id of `text` under the course tokenizer; it must be exactly one token."""
    ids = course_ids(text)
    if ids.numel() != 1:
        raise ValueError(f"{text!r} is {ids.numel()} tokens, not one")
    return int(ids[0])


def random_tensor(shape: tuple[int, ...], seed: int, scale: float = 1.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Standard normal values times `scale`, of any shape, deterministic for a seed."""
    return (scale * torch.randn(shape, generator=torch.Generator().manual_seed(seed))).to(dtype)


@lru_cache(maxsize=None)
def cached_tiny_model(arch: str, seed: int = 0, **kwargs):
    """`lesson_utils.tiny_model(arch, seed=seed, **kwargs)`, built once per process without
    disturbing torch's global random generator."""
    from lesson_utils import tiny_model

    with torch.random.fork_rng():
        return tiny_model(arch, seed=seed, **kwargs)


def ranked_ids(values: torch.Tensor) -> torch.Tensor:
    """Indices of `values` (last dim) from largest to smallest; equal values go to the lower index."""
    return torch.sort(values, dim=-1, descending=True, stable=True).indices
