"""Chapter 02 on generated inputs: every exercise against an independent reference (a float64 F.linear, a stable
float64 sort, exact integer arithmetic, a float64 cosine) on inputs its docstring allows.

lm_head_logits: h [..., d] (0 to 2 batch dims of sizes 0 to 3), W [V, d], an optional bias, one float dtype for all,
non-contiguous views, scales 1e-3 to 1e3. top_k_tokens: [V] logits (V >= 0) with ties and -inf, k from 0 to V.
logit_contributions: [d] pairs (zero vectors, d = 1). topk_logits_chunked: chunks of 1 to V + 2 rows, k from 1 to V,
float16/bfloat16 only integer-valued (exact), so the order of the sums cannot move a value. lm_head_flops: counts
beyond 2**53. The tolerance follows the dtype: the reference is exact in float64, the learner's sum in h's dtype is
not.
"""
from __future__ import annotations

from functools import lru_cache

import torch
import torch.nn.functional as F

from ..compare import expect_tensor
from ..fixtures import ranked_ids
from ..properties import FLOAT_DTYPES, LAYOUTS, SCALES, Example, Recipe, draw, ordered
from ...i18n import _
from .chunked import _check_chunked
from .head import _check_contributions, _check_flops, _check_topk, _logits_mistakes, _reference_topk

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
DENSE = ("normal", "ties", "uniform", "row_scales")  # no -inf: h @ W.T of -inf is NaN, which no contract allows


def _eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype).eps


@lru_cache(maxsize=None)
def logits_examples() -> list[Example]:
    from hypothesis import strategies as st

    shapes = st.tuples(st.lists(st.integers(0, 3), max_size=2), st.integers(1, 8), st.integers(1, 12))
    drawn = draw(st.tuples(shapes, st.sampled_from(FLOAT_DTYPES), st.sampled_from(DENSE), st.sampled_from(SCALES),
                           st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS), st.booleans(),
                           st.integers(0, 2 ** 16)), N)
    out: list[Example] = []
    for (batch, d, V), dtype, kind, scale, lay_h, lay_w, bias, seed in drawn:
        if dtype == torch.float16 and (scale > 30 or kind == "row_scales"):
            kind, scale = "normal", 1.0  # a float16 sum past 65504 is inf: where it overflows the contract leaves open
        h = Recipe(tuple(batch) + (d,), dtype, kind, scale, lay_h, seed).build()
        W = Recipe((V, d), dtype, "normal", 1.0, lay_w, seed + 1).build()
        b = Recipe((V,), dtype, "normal", scale, "sliced" if seed % 2 else "contiguous", seed + 2).build() \
            if bias else None
        out.append((h, W, b))
    out += [(torch.ones(1, 1, 3, dtype=torch.float64), torch.ones(1, 3, dtype=torch.float64), None),  # every dim 1
            (torch.tensor([[2.0]]), torch.tensor([[3.0]]), torch.tensor([1.0])),
            (torch.randn(3, 0, 4, generator=torch.Generator().manual_seed(5)), torch.ones(2, 4), torch.zeros(2))]
    return ordered(out)


def logits_reference(args: Example) -> torch.Tensor:
    h, W, b = args
    return F.linear(h.double(), W.double(), None if b is None else b.double()).to(h.dtype)


def _check_logits_generated(out, args: Example) -> None:
    """The float64 reference, within what a sum of d products in h's dtype can round to."""
    h, W, b = args
    size = h.double().abs() @ W.double().abs().T + (0 if b is None else b.double().abs())
    big = float(size.max()) if size.numel() else 0.0
    tol = 1e-12 if h.dtype == torch.float64 else (h.shape[-1] + 2) * _eps(h.dtype) * big + 1e-30
    rtol = 2 * _eps(h.dtype)
    expect_tensor(out, logits_reference(args), _("logits"), atol=tol, rtol=rtol,
                  mistakes=list(_logits_mistakes(h, W, b)))


@lru_cache(maxsize=None)
def top_k_examples() -> list[Example]:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(0, 12), st.sampled_from(FLOAT_DTYPES),
                           st.sampled_from(("normal", "ties", "uniform", "neg_inf")), st.sampled_from(SCALES),
                           st.sampled_from(("contiguous", "sliced")), st.integers(0, 2 ** 16)), N)
    out: list[Example] = []
    for V, dtype, kind, scale, layout, seed in drawn:
        k = min((0, 1, V // 2, V - 1, V)[seed % 5], V) if V else 0
        out.append((Recipe((V,), dtype, kind, scale, layout, seed).build(), k))
    inf = float("-inf")
    out += [(torch.tensor([inf, inf, 1.0, inf], dtype=torch.float64), 4), (torch.tensor([2.0]), 1),
            (torch.zeros(0), 0), (torch.tensor([0.5, 0.5], dtype=torch.bfloat16), 1),
            (torch.tensor([1.0, 3.0, 3.0], dtype=torch.float64), 2)]
    return ordered(out)


def top_k_reference(args: Example):
    return _reference_topk(*args)


@lru_cache(maxsize=None)
def contributions_examples() -> list[Example]:
    from hypothesis import strategies as st

    # half precision at scale 1 here; the cases below add tiny vectors, half-precision overflow and h == w
    drawn = draw(st.tuples(st.integers(1, 9), st.sampled_from(FLOAT_DTYPES), st.sampled_from(DENSE),
                           st.sampled_from(SCALES), st.sampled_from(("contiguous", "sliced")),
                           st.integers(0, 2 ** 16)), N)
    out: list[Example] = []
    for d, dtype, kind, scale, layout, seed in drawn:
        scale = scale if dtype in (torch.float32, torch.float64) else 1.0
        h = Recipe((d,), dtype, kind, scale, layout, seed).build()
        w = Recipe((d,), dtype, "normal", 1.0, "contiguous", seed + 1).build()
        out.append((h, w))
    out += [(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)),
            (torch.tensor([2.0]), torch.tensor([-3.0])), (torch.tensor([0.5], dtype=torch.bfloat16),
                                                          torch.zeros(1, dtype=torch.bfloat16))]
    full = [(h, w) for h, w in out if h.dtype in (torch.float32, torch.float64)]  # tiny: F's epsilon shows
    out += [(h * 1e-9, w) for h, w in full[:2]] + [(h * 1e-20, w) for h, w in full[2:4]]
    big = torch.tensor([300.0, -200.0, 250.0, 120.0])  # |h|^2 = 205,300 > 65,504: float16 overflows
    out += [(big.half(), (big * 0.5).flip(0).half()), (big.bfloat16(), big.bfloat16())]
    huge = big * 1e17  # |h|^2 = 2e39: past float32's (and bfloat16's) largest number, fine in float64
    out += [(huge.bfloat16(), (huge * 0.5).flip(0).bfloat16()), (huge, huge.flip(0))]
    h_eq = torch.randn(7, generator=torch.Generator().manual_seed(0))  # float32: h.h / (|h| |h|) = 1.0000001
    out.append((h_eq, h_eq.clone()))
    return ordered(out)


def contributions_reference(args: Example):
    h, w = args
    hd, wd = h.double(), w.double()
    n = float(hd.norm() * wd.norm())
    return (hd * wd).to(h.dtype), min(1.0, max(-1.0, float(hd @ wd) / n)) if n > 0 else 0.0


def _check_contributions_generated(out, args: Example) -> None:
    h, _w = args
    # a cosine computed in h's own dtype rounds each of its d products and two norms: allowed by the contract
    _check_contributions(out, args, cos_tol=max(1e-5, (h.shape[0] + 4) * _eps(h.dtype)))


@lru_cache(maxsize=None)
def flops_examples() -> list[Example]:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(1, 2 ** 16), st.integers(1, 2 ** 20),
                           st.one_of(st.none(), st.integers(0, 2 ** 40))), N)
    return ordered([(d, V) if p is None else (d, V, p) for d, V, p in drawn]
                   + [(1, 1, 0), (2 ** 20 + 1, 2 ** 20 + 3, 2 ** 21)])


def flops_reference(args: Example) -> int:
    d, V, positions = (*args, 1)[:3]
    multiplies = d * V * positions  # one per weight per position; as many additions
    return multiplies + multiplies


def _check_flops_generated(out, args: Example) -> None:
    _check_flops(out, args, expected=flops_reference(args))


@lru_cache(maxsize=None)
def chunked_examples() -> list[Example]:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(0, 3), st.integers(1, 6), st.integers(1, 24), st.sampled_from(FLOAT_DTYPES),
                           st.sampled_from(("normal", "ties", "row_scales")), st.sampled_from(SCALES),
                           st.sampled_from(LAYOUTS), st.integers(0, 2 ** 16)), N)
    out: list[Example] = []
    for n, d, V, dtype, kind, scale, layout, seed in drawn:
        if dtype in (torch.float16, torch.bfloat16):
            kind, scale = "ties", 1.0  # small integers: every sum exact, in any order
        h = Recipe((n, d), dtype, kind, scale, layout, seed).build()
        W = Recipe((V, d), dtype, "ties" if kind == "ties" else "normal", 1.0, layout, seed + 1).build()
        k = min((1, 2, V // 2 or 1, V)[seed % 4], V)
        chunk = (1, 2, 3, V - 1 or 1, V, V + 2)[seed % 6]
        out.append((h, W, k, chunk))
    out += [(torch.ones(1, 1), torch.ones(3, 1), 3, 2), (torch.zeros(2, 2, dtype=torch.float64),
                                                         torch.zeros(5, 2, dtype=torch.float64), 2, 4)]
    return ordered(out)


def chunked_reference(args: Example):
    h, W, k, _chunk = args
    logits = h.double() @ W.double().T
    ids = ranked_ids(logits)[:, :k]
    return logits.gather(-1, ids).to(h.dtype), ids


def _check_chunked_generated(out, args: Example) -> None:
    _check_chunked((out, []), args)  # the named cases see the ops; here only the values and ids


# exercise -> (its examples, its check, the reference shown next to the learner's result)
GENERATED = {
    "lm_head_logits": (logits_examples, _check_logits_generated, logits_reference),
    "top_k_tokens": (top_k_examples, _check_topk, top_k_reference),
    "lm_head_flops": (flops_examples, _check_flops_generated, flops_reference),
    "logit_contributions": (contributions_examples, _check_contributions_generated, contributions_reference),
    "topk_logits_chunked": (chunked_examples, _check_chunked_generated, chunked_reference),
}
