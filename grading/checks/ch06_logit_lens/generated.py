"""Chapter 06 on generated inputs: target_rank_by_layer, kl_to_final and fit_tuned_lens against their references
(scipy's rankdata, the KL sum in float64, least squares on the augmented system in float64). logit_lens takes a
model: its named cases cover the architectures.

Every input is one the stubs' docstrings allow. target_rank_by_layer: scores [L, V] of every float dtype (L and V
from 1, a lens of no rows too), ties, uniform rows, rows holding -inf, non-contiguous views, every target id.
kl_to_final: log-probabilities (log_softmax of such scores) in float32 and float64, with -inf in the layers' rows
and in the final row (a token the final distribution rules out adds 0), scales up to 1e3. fit_tuned_lens: float32
and float64 states with means far from 0, N > d_in when ridge = 0.
"""
from __future__ import annotations

from functools import lru_cache

import torch

from ...i18n import _
from ...model import Chapter
from ..properties import Example, Recipe, generated, ordered, recipes
from ..unchanged import argument_names
from .lens import _check_kl, _check_rank, _reference_ranks, kl_reference
from .tuned_lens import _check_tuned_lens, _ridge_reference

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
NEG_INF = float("-inf")


def _lens(r: Recipe, min_rows: int = 0) -> torch.Tensor:
    """The recipe's scores as a lens [L, V] (its batch dims as layers), in the recipe's layout."""
    rows = max(min_rows, int(torch.tensor(r.shape[:-1]).prod()) if len(r.shape) > 1 else 1)
    return Recipe((rows, r.shape[-1]), r.dtype, r.kind, r.scale, r.layout, r.seed).build()


@lru_cache(maxsize=None)
def rank_examples() -> list[Example]:
    out: list[Example] = [(lens, r.seed % lens.shape[-1]) for r in recipes(N) for lens in [_lens(r, min_rows=1)]]
    out += [(torch.tensor([[0.1, 0.7, 0.2], [0.5, 0.2, 0.3]]), 2),
            (torch.tensor([[NEG_INF, 0.0, NEG_INF]]), 0),  # a -inf target: every finite token is above it
            (torch.tensor([[2.0, 2.0]], dtype=torch.float64), 1)]
    return ordered(out)


def rank_reference(args: Example) -> torch.Tensor:
    return _reference_ranks(*args)


def _log_probs(r: Recipe, final_neg_inf: bool) -> torch.Tensor:
    """log_softmax (in float64, then cast) of the recipe's scores; some final rows rule tokens out (-inf)."""
    x = _lens(r, min_rows=1)
    lens = x.double().log_softmax(-1)
    if final_neg_inf and lens.shape[-1] > 1:
        last = lens[-1].clone()
        last[r.seed % lens.shape[-1]] = NEG_INF
        lens = torch.cat([lens[:-1], last.log_softmax(-1)[None]])
    lens = lens.to(r.dtype)
    return lens.T.contiguous().T if r.layout == "transposed" else lens


@lru_cache(maxsize=None)
def kl_examples() -> list[Example]:
    out: list[Example] = [(_log_probs(r, r.seed % 3 == 0),) for r in recipes(N, dtypes=(torch.float32, torch.float64))]
    ruled_out = torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.9, 0.1, 0.0]], dtype=torch.float64).log()
    out += [(ruled_out,), (ruled_out.float(),),  # the final row gives a token probability 0: it adds 0, no NaN
            (torch.tensor([[0.5, 0.5], [0.9, 0.1]]).log(),)]
    return ordered(out)


@lru_cache(maxsize=None)
def tuned_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N, dtypes=(torch.float32, torch.float64), min_v=1, max_v=4):
        g = torch.Generator().manual_seed(r.seed)
        d_in, d_out = r.shape[-1], 1 + r.seed % 3
        ridge = (0.0, 1e-3, 0.5, 10.0)[r.seed % 4]
        n = d_in + 2 + r.seed % 6 if ridge == 0 else 1 + r.seed % 8
        mean = (0.0, 1.0, 30.0)[r.seed % 3]
        X = torch.randn(n, d_in, generator=g, dtype=torch.float64) + mean
        Y = X @ torch.randn(d_in, d_out, generator=g, dtype=torch.float64) + 0.1 * torch.randn(
            n, d_out, generator=g, dtype=torch.float64) + torch.randn(d_out, generator=g, dtype=torch.float64)
        X, Y = X.to(r.dtype), Y.to(r.dtype)
        if r.layout == "transposed":
            X = X.T.contiguous().T
        out.append((X, Y, ridge))
    out.append((torch.tensor([[0.0], [1.0], [2.0], [3.0]]), torch.tensor([[1.0], [3.0], [5.0], [7.0]]), 0.0))
    return ordered(out)


def tuned_reference(args: Example) -> tuple[torch.Tensor, torch.Tensor]:
    A, b = _ridge_reference(*args)
    return A.to(args[0].dtype), b.to(args[0].dtype)


# exercise -> (its examples, the chapter's check, the reference shown next to the learner's result)
GENERATED = {
    "target_rank_by_layer": (rank_examples, _check_rank, rank_reference),
    "kl_to_final": (kl_examples, _check_kl, lambda args: kl_reference(args[0])),
    "fit_tuned_lens": (tuned_examples, _check_tuned_lens, tuned_reference),
}


def with_generated(chapter: Chapter) -> Chapter:
    """Give each exercise of GENERATED one more case: its generated inputs, checked as its named cases are."""
    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.name in GENERATED:
            ex.cases.append(generated(_("generated inputs (shapes, dtypes, ties, -inf, views), smallest failure "
                                        "shown"), *GENERATED[ex.name], names=names.get(ex.name, [])))
    return chapter

