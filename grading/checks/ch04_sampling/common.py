"""Chapter 04's shared inputs (ties, -inf, the real model's logits) and float64 references."""
from __future__ import annotations

from functools import lru_cache

import torch

from ...i18n import _
from ..compare import CheckFailed, expect_tensor, seeded
from ..fixtures import CAT_PROMPT, course_ids, course_model, random_ids


NEG_INF = float("-inf")
FIVE = [2.3, 1.5, 3.8, 0.5, 1.2]  # the chapter's worked example


# ---------------------------------------------------------------- inputs


def _ties(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Small integers as floats: many exactly equal logits."""
    return random_ids(4, shape, seed).float()


def _with_neg_inf(x: torch.Tensor, seed: int, share: float = 0.4) -> torch.Tensor:
    """Some entries set to -inf (tokens masked earlier); the first column always stays finite."""
    mask = torch.rand(x.shape, generator=seeded(seed)) < share
    mask[..., 0] = False
    return x.masked_fill(mask, NEG_INF)


def _crossing() -> torch.Tensor:
    """Probabilities [0.5, 0.3, 0.15, 0.05] as logits, shuffled: with p = 0.7 the token of 0.3 crosses p."""
    return torch.tensor([0.15, 0.5, 0.05, 0.3]).log()


@lru_cache(maxsize=1)
def _real_logits() -> torch.Tensor:
    """The course model's next-token logits after 'The cat sat on the', [V]."""
    with torch.no_grad():
        return course_model()[0](course_ids(CAT_PROMPT)[None]).logits[0, -1].clone()


def _real() -> torch.Tensor:
    return _real_logits().clone()


# ---------------------------------------------------------------- references


def _as_rows(fn, x: torch.Tensor) -> torch.Tensor:
    """Apply a warper (which wants [batch, V]) to logits of any shape [..., V]."""
    return fn(None, x.reshape(-1, x.shape[-1])).reshape(x.shape)


def _softmax64(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.softmax(x.double(), dim=dim)


def _removed_to_zero(x: torch.Tensor, filtered: torch.Tensor) -> torch.Tensor:
    """The filter's result with removed entries set to 0 instead of -inf."""
    return filtered.masked_fill(torch.isinf(filtered) & ~torch.isinf(x), 0.0)


def _check_filter(out, x: torch.Tensor, expected: torch.Tensor, ambiguous: torch.Tensor, what: str, mistakes) -> None:
    """`out` must equal `expected`; where `ambiguous` (a tie or a float rounding at the threshold), either
    keeping the logit or removing it is accepted."""
    mistakes = list(mistakes)
    if isinstance(out, torch.Tensor) and out.shape == expected.shape and out.dtype == expected.dtype:
        rows = out.reshape(-1, out.shape[-1])
        had = torch.isfinite(x.reshape(-1, x.shape[-1])).any(-1)
        empty = had & ~torch.isfinite(rows).any(-1)
        if bool(empty.any()):
            raise CheckFailed(_("{what}: row {row} (of the input flattened to rows) has no token left; a filter must "
                                "always keep at least the most likely token.", what=what, row=int(empty.nonzero()[0])))
        either = ambiguous & ((out == x) | (out == NEG_INF))
        expected = torch.where(either, out, expected)
    expect_tensor(out, expected, what, atol=0, rtol=0, mistakes=mistakes)


# ---------------------------------------------------------------- the chapter
