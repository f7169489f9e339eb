"""Chapter 01's generated inputs (grading/checks/properties.py): examples drawn by Hypothesis for each exercise,
the check they go through and the independent reference shown next to a learner's result."""
from __future__ import annotations

from functools import lru_cache

import torch
import torch.nn.functional as F

from ..properties import FLOAT_DTYPES, KINDS, LAYOUTS, Recipe, draw, ids_tensor, ordered
from .named_cases import _check_backward, _check_lookup, _check_offset


N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
INT_DTYPES = (torch.int8, torch.uint8, torch.int16, torch.uint16, torch.int32, torch.uint32, torch.int64, torch.uint64)
ALL_DTYPES = FLOAT_DTYPES + (torch.float8_e4m3fn, torch.float8_e5m2) + INT_DTYPES


def _ids_and_tables(n: int, min_dims: int = 0) -> list:
    """(V, d, ids shape, E's dtype, kind and layout, the ids' layout, seed) tuples drawn by Hypothesis."""
    from hypothesis import strategies as st

    shape = st.lists(st.integers(0, 3), min_size=min_dims, max_size=3)
    return draw(st.tuples(st.integers(1, 9), st.integers(1, 5), shape, st.sampled_from(FLOAT_DTYPES),
                          st.sampled_from(KINDS), st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS),
                          st.integers(0, 2 ** 16)), n)


@lru_cache(maxsize=None)
def lookup_examples(large: bool = True) -> list:
    """Tables of every float dtype and layout, ids [*shape] (1 to 3 dims: E[ids] of a 0-d id is a view of E's row,
    which the contract allows) of every layout; and ids above 2**24 in a bfloat16 table of 2**24 + 8 rows."""
    out: list = []
    for V, d, shape, dtype, kind, layout, id_layout, seed in _ids_and_tables(N, min_dims=1):
        out.append((Recipe((V, d), dtype, kind, 1.0, layout, seed).build(), ids_tensor(tuple(shape), V, id_layout,
                                                                                       seed + 1)))
    out += [(torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, 1, dtype=torch.long)),
            (torch.arange(6.0).reshape(3, 2), torch.tensor([[2, 0, 2]]))]
    if large:
        big = torch.zeros(2 ** 24 + 8, 1, dtype=torch.bfloat16)
        big[-8:, 0] = torch.arange(1.0, 9.0)  # rows 2**24 .. 2**24 + 7; float32 rounds 2**24 + 1 and + 3 away
        out.append((big, torch.tensor([2 ** 24 + 1, 2 ** 24 + 3, 2 ** 24 + 2])))
    return ordered(out)


def lookup_reference(args: tuple) -> torch.Tensor:
    return F.embedding(args[1], args[0])


@lru_cache(maxsize=None)
def onehot_examples() -> list:
    """lookup's, finite tables only: one_hot(ids) @ E multiplies every row by 0, and 0 * -inf is NaN."""
    return [(E, ids) for E, ids in lookup_examples(large=False) if bool(torch.isfinite(E).all())]


def _check_onehot_generated(out, args: tuple) -> None:
    _check_lookup(out, args)  # the values; the named cases see the matrix product


@lru_cache(maxsize=None)
def offset_examples() -> list:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(0, 2 ** 31), st.integers(1, 2 ** 16), st.sampled_from(ALL_DTYPES)), N)
    return ordered(list(drawn) + [(0, 1, torch.uint8), (1, 1, torch.int64), (2 ** 50 + 1, 24, torch.float8_e5m2),
                                  (2 ** 50 + 3, 3, torch.int64)])  # beyond 2**53: a float detour rounds


def offset_reference(args: tuple) -> int:
    i, d, dtype = args
    return i * d * dtype.itemsize


def _check_offset_generated(out, args: tuple) -> None:
    _check_offset(out, args, expected=offset_reference(args))


@lru_cache(maxsize=None)
def backward_examples() -> list:
    """Gradients of every float dtype and layout (autograd passes expanded ones), ids of every shape (0-d too) and
    layout with repeats, vocab_size from max id + 1 up, unused rows."""
    out: list = []
    for V, d, shape, dtype, kind, layout, id_layout, seed in _ids_and_tables(N):
        ids = ids_tensor(tuple(shape), V, id_layout, seed + 1)
        grad = Recipe(tuple(shape) + (d,), dtype, "uniform" if kind == "uniform" else "normal", 1.0, layout,
                      seed).build()
        out.append((grad, ids, V + seed % 3))
    out += [(torch.ones(1, 1, dtype=torch.float64), torch.zeros(1, dtype=torch.long), 1),
            (torch.ones(4, dtype=torch.float64).expand(3, 4), torch.tensor([1, 1, 1]), 2),
            (torch.ones(2, dtype=torch.bfloat16), torch.tensor(4), 5)]
    return ordered(out)


def backward_reference(args: tuple) -> torch.Tensor:
    grad_out, ids, V = args
    d = grad_out.shape[-1]
    expected = torch.zeros(V, d, dtype=torch.float64)
    expected.index_put_((ids.reshape(-1),), grad_out.double().reshape(-1, d), accumulate=True)
    return expected.to(grad_out.dtype)


def _check_backward_generated(out, args: tuple) -> None:
    grad_out, ids, V = args
    repeats = int(torch.bincount(ids.reshape(-1)).max()) if ids.numel() else 1
    top = float(grad_out.double().abs().max()) if grad_out.numel() else 0.0
    eps = torch.finfo(grad_out.dtype).eps
    _check_backward(out, args, atol=max(1e-12, (repeats + 1) * eps * top), rtol=2 * eps)


# exercise -> (its examples, its check, the reference shown next to the learner's result)
GENERATED = {
    "lookup": (lookup_examples, _check_lookup, lookup_reference),
    "lookup_onehot": (onehot_examples, _check_onehot_generated, lookup_reference),
    "row_byte_offset": (offset_examples, _check_offset_generated, offset_reference),
    "embedding_backward": (backward_examples, _check_backward_generated, backward_reference),
}
