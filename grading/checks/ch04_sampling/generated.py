"""Chapter 04 on generated inputs: softmax, apply_temperature and the three filters against their references.

Every input is one the stubs' docstrings allow: logits of any shape [..., V] (batch sizes 0 to 3, V >= 1; softmax
also V = 0), every float dtype, ties, -inf (never a whole slice: softmax of nothing is left open), uniform rows,
scales from 1e-3 to 1e3 and rows a million-fold apart, non-contiguous views, and the parameters' boundaries.
top_p_filter and min_p_filter get float32 and float64 only: transformers' warpers compute their probabilities in the
logits' own dtype, so in float16/bfloat16 the cut itself moves with rounding the docstring leaves open.
"""
from __future__ import annotations

from functools import lru_cache

import torch

from ...i18n import _
from ...model import Chapter
from ..properties import Example, generated, ordered, recipes
from ..unchanged import argument_names
from .common import NEG_INF, _as_rows, _softmax64
from .filters import _check_min_p, _check_top_k, _check_top_p
from .softmax import _check_softmax, _check_temperature

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
TEMPERATURES = (0.01, 0.5, 1.0, 1.5, 3, 100.0)
TOP_P = (0.0, 0.3, 0.5, 0.9, 1.0)
MIN_P = (0.0, 0.05, 0.1, 0.5, 1.0)
BINARY = [0.5, 0.25, 0.125, 0.125]  # exact in binary: p = 0.75 lies exactly on a cumulative boundary


def _row0_probs(x: torch.Tensor) -> torch.Tensor | None:
    """The first row's probabilities (float64, sorted, largest first), or None for an input with no rows."""
    rows = x.reshape(-1, x.shape[-1])
    return torch.softmax(rows[0].double(), -1).sort(descending=True).values if rows.shape[0] else None


@lru_cache(maxsize=None)
def softmax_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N, min_v=0):
        dim = r.seed % len(r.shape) - (len(r.shape) if r.seed % 2 else 0)  # negative and positive dims
        out.append((r.build(finite_dim=dim), dim))
    out += [(torch.tensor([7.0]), 0), (torch.tensor([[-2.0]], dtype=torch.bfloat16), -1),
            (torch.tensor([1000.0, 1000.0], dtype=torch.float16), -1),
            (torch.tensor([NEG_INF, 0.0]), 0),
            (torch.tensor([[1000.0, 999.0], [0.0, -1.0]], dtype=torch.float64), -1),
            (torch.zeros(2, 0), -1)]  # empty: the result is still a new tensor, never the input itself
    return ordered(out)


@lru_cache(maxsize=None)
def temperature_examples() -> list[Example]:
    out: list[Example] = [(r.build(), TEMPERATURES[r.seed % len(TEMPERATURES)]) for r in recipes(N)]
    out.append((torch.tensor([1e4, -1e4, 0.0], dtype=torch.float64), 0.01))
    return ordered(out)


@lru_cache(maxsize=None)
def top_k_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N):
        v = r.shape[-1]
        out.append((r.build(), (1, 2, 3, v, v + 5)[r.seed % 5]))
    out += [(torch.tensor([[1.0, 3.0, 3.0, 0.5]]), 1), (torch.tensor([2.0]), 1), (torch.tensor([[0.5]]), 3)]
    return ordered(out)


@lru_cache(maxsize=None)
def top_p_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N, dtypes=(torch.float32, torch.float64)):
        x = r.build()
        probs = _row0_probs(x)
        if r.seed % 6 == 5 and probs is not None:  # exactly on a cumulative boundary of the first row
            out.append((x, float(probs.cumsum(-1)[r.seed % x.shape[-1]])))
        else:
            out.append((x, TOP_P[r.seed % len(TOP_P)]))
    for dtype in (torch.float32, torch.float64):
        out.append((torch.tensor(BINARY, dtype=torch.float64).log().to(dtype), 0.75))
    out.append((torch.tensor([3.0]), 0.0))
    return ordered(out)


@lru_cache(maxsize=None)
def min_p_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N, dtypes=(torch.float32, torch.float64)):
        x = r.build()
        probs = _row0_probs(x)
        if r.seed % 6 == 5 and probs is not None and x.shape[-1] > 1:  # the second token exactly at the threshold
            out.append((x, float(probs[1] / probs[0])))
        else:
            out.append((x, MIN_P[r.seed % len(MIN_P)]))
    for dtype in (torch.float32, torch.float64):  # float32: 0.25 == 0.5 * 0.5 exactly, and a 0.25 token is kept
        out.append((torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64).log().to(dtype), 0.5))
    return ordered(out)


def softmax_reference(args: Example) -> torch.Tensor:
    return _softmax64(args[0], args[1]).to(args[0].dtype)


def temperature_reference(args: Example) -> torch.Tensor:
    from transformers.generation.logits_process import TemperatureLogitsWarper

    return TemperatureLogitsWarper(float(args[1]))(None, args[0])


def top_k_reference(args: Example) -> torch.Tensor:
    from transformers.generation.logits_process import TopKLogitsWarper

    return _as_rows(TopKLogitsWarper(top_k=args[1]), args[0])


def top_p_reference(args: Example) -> torch.Tensor:
    from transformers.generation.logits_process import TopPLogitsWarper

    return _as_rows(TopPLogitsWarper(top_p=args[1]), args[0])


def min_p_reference(args: Example) -> torch.Tensor:
    from transformers.generation.logits_process import MinPLogitsWarper

    return _as_rows(MinPLogitsWarper(min_p=args[1]), args[0])


# exercise -> (its examples, the chapter's check, the reference shown next to the learner's result)
GENERATED = {
    "softmax": (softmax_examples, _check_softmax, softmax_reference),
    "apply_temperature": (temperature_examples, _check_temperature, temperature_reference),
    "top_k_filter": (top_k_examples, _check_top_k, top_k_reference),
    "top_p_filter": (top_p_examples, _check_top_p, top_p_reference),
    "min_p_filter": (min_p_examples, _check_min_p, min_p_reference),
}


def with_generated(chapter: Chapter) -> Chapter:
    """Give each exercise of GENERATED one more case: its generated inputs, checked as its named cases are."""
    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.name in GENERATED:
            ex.cases.append(generated(_("generated inputs (shapes, dtypes, ties, -inf, views, boundaries), smallest "
                                        "failure shown"), *GENERATED[ex.name], names=names.get(ex.name, [])))
    return chapter
