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


def _binary() -> torch.Tensor:
    """Probabilities 0.5, 0.25, 0.125, 0.125 (two rows, shuffled) as float32 logits: float32 softmax gives them exactly,
    so every cumulative sum and min_p * p_max of them is exact, and p = 0.75 lies exactly on a boundary."""
    return torch.tensor([[0.125, 0.5, 0.125, 0.25], [0.25, 0.125, 0.5, 0.125]], dtype=torch.float64).log().float()


def _binary_min_p() -> torch.Tensor:
    """Exact float32 probabilities for min-p: [0.5, 0.25, 0.125, 0.125, 0] (a masked token) and [0.25, 0.25,
    0.1875, 0.1875, 0.125], shuffled. min_p = 0.25 or 0.5 puts a probability exactly on min_p * p_max, and the
    second row tells a `<=` from comparing with min_p itself."""
    return torch.tensor([[0.125, 0.5, 0.25, 0.0, 0.125], [0.1875, 0.25, 0.125, 0.25, 0.1875]],
                        dtype=torch.float64).log().float()


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


EXACT_STEP = 2.0 ** -20  # probabilities that are multiples of this (and sum to exactly 1) make an exact cut


def _cut_probs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(the probabilities a filter cuts at, in float64; per row [..., 1], whether the cut is exact).

    The warpers compute the probabilities in the logits' own dtype. Where float32 or float64 logits give dyadic
    probabilities there (multiples of EXACT_STEP summing to exactly 1, such as 0.5, 0.25, 0.125), every
    cumulative sum and min_p * p_max is exact: the cut is those probabilities' and no rounding tolerance applies
    (a `<` for a `<=` must fail). Elsewhere: the float64 softmax, compared with a tolerance."""
    if x.dtype not in (torch.float32, torch.float64) or x.numel() == 0:
        return _softmax64(x), torch.zeros(x.shape[:-1] + (1,), dtype=torch.bool)
    own = torch.softmax(x, -1).double()
    steps = own / EXACT_STEP
    exact = (steps == steps.round()).all(-1, keepdim=True) & (own.sum(-1, keepdim=True) == 1)
    return torch.where(exact, own, _softmax64(x)), exact


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
