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
