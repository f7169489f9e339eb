"""Chapter 05: cosine_neighbors on random tables and the course model's E."""
from __future__ import annotations

import torch

from ..compare import CheckFailed, named_mistake
from ..fixtures import course_embedding, course_ids, random_table, random_tensor, ranked_ids


TIE = 1e-12  # float64 similarities this close are the same number (duplicate or power-of-two scaled rows)


# ---------------------------------------------------------------- inputs: cosine_neighbors


def _different_norms() -> torch.Tensor:
    """30 x 8 rows whose lengths range from 0.01 to 100 (in shuffled order), so the dot product ranks them differently."""
    exponents = torch.linspace(-2, 2, 30)[torch.argsort(random_tensor((30,), 31))]
    return random_table(30, 8, 32) * 10 ** exponents[:, None]


def _with_ties() -> torch.Tensor:
    """12 x 6 rows where rows 2, 5 and 9 are equal, row 11 is 2 x row 2 (same direction), row 0 is close to them."""
    E = random_table(12, 6, 41)
    E[5] = E[2]
    E[9] = E[2]
    E[11] = 2 * E[2]  # a power of two: the unit vector is bit-for-bit the same
    E[0] = E[2] + 0.3 * random_table(1, 6, 42)[0]
    return E


def _real(text: str, k: int):
    return lambda: (course_embedding(), int(course_ids(text)[0]), k)


NEIGHBOR_INPUTS = {
    "the docstring example: [[1, 0], [10, 1], [0, 1], [2, 0]], row 0, k = 2":
        lambda: (torch.tensor([[1., 0.], [10., 1.], [0., 1.], [2., 0.]]), 0, 2),
    "rows of very different lengths (0.01 to 100): cosine is not the dot product": lambda: (_different_norms(), 4, 6),
    "duplicate rows 2, 5, 9 and row 11 = 2 x row 2 tie: lower index first": lambda: (_with_ties(), 0, 6),
    "a tie cut by k: keep the lower indices of the tied rows": lambda: (_with_ties(), 0, 2),
    "the query row has copies: leave out the row itself, keep its copies": lambda: (_with_ties(), 5, 4),
    "k = 1, query is the last row": lambda: (random_table(15, 4, 51), 14, 1),
    "k = n - 1: every other row in order, negative similarities too": lambda: (random_table(10, 3, 52), 0, 9),
    "a float64 table": lambda: (random_table(25, 5, 53, torch.float64), 7, 5),
    "the course model's E [49152, 576]: ' three', k = 5": _real(" three", 5),
    "the course model's E: ' Paris', k = 6": _real(" Paris", 6),
    "the course model's E: '<issue_start>' (id 8), an unused token with duplicate rows, k = 8":
        lambda: (course_embedding(), 8, 8),
}

_UNIT_CACHE: dict[tuple, torch.Tensor] = {}


def _cosines(E: torch.Tensor, index: int) -> torch.Tensor:
    """Cosine similarity of every row with row `index`, in float64 (the real table's unit rows are cached)."""
    key = (tuple(E.shape), E.dtype, float(E[0, 0]), float(E[-1, -1]))
    unit = _UNIT_CACHE.get(key)
    if unit is None:
        E64 = E.double()
        unit = E64 / E64.norm(dim=1, keepdim=True)
        if E.shape[0] > 1000:
            _UNIT_CACHE.clear()
            _UNIT_CACHE[key] = unit
    return unit @ unit[index]


def _ranked(scores: torch.Tensor, exclude: int | None, descending: bool = True) -> torch.Tensor:
    """Indices by score (ties within TIE: lower index first), `exclude` left out."""
    key = torch.round(scores / TIE) * TIE  # equal within rounding noise -> equal keys
    order = ranked_ids(key if descending else -key)
    return order[order != exclude] if exclude is not None else order


def _neighbor_mistakes(E: torch.Tensor, index: int, k: int, sims: torch.Tensor):
    E64 = E.double()
    yield ("dot product instead of cosine: E @ E[index] rewards long rows whatever their direction. Divide by "
           "both lengths (or normalise every row first), since only the direction should count.",
           lambda: _ranked(E64 @ E64[index], index)[:k])
    yield ("you sorted in increasing order: the most similar row (largest cosine) comes first.",
           lambda: _ranked(sims, index, descending=False)[:k])
    yield ("you ranked by Euclidean distance: that mixes length into the ranking; cosine compares directions only.",
           lambda: _ranked(-(E64 - E64[index]).norm(dim=1), index)[:k])


def _check_neighbors(out, inputs):
    E, index, k = inputs
    n = E.shape[0]
    if not isinstance(out, torch.Tensor):
        raise CheckFailed(f"expected a LongTensor of {k} row indices, got {type(out).__name__}.")
    if out.dtype != torch.long:
        raise CheckFailed(f"expected dtype torch.int64 (row indices), got {out.dtype}. "
                          "torch.sort(...).indices and torch.topk(...).indices are already int64.")
    if out.shape != (k,):
        raise CheckFailed(f"expected shape [{k}] (k = {k} neighbours), got {list(out.shape)}.")
    got = out.tolist()
    if any(not 0 <= i < n for i in got):
        raise CheckFailed(f"row indices must be in [0, {n}); got {got[:10]}.")
    if index in got:
        raise CheckFailed(f"your answer contains the query row {index} itself (at position {got.index(index)}). "
                          "Exclude it by its index before ranking. (Dropping the first result is not enough: "
                          "a duplicate row ties with it and may come first.)")
    if len(set(got)) != k:
        raise CheckFailed(f"a row appears twice in your answer: {got[:10]}.")

    sims = _cosines(E, index)
    expected = _ranked(sims, index)[:k]
    got_sims, exp_sims = sims[out], sims[expected]
    bad = (got_sims - exp_sims).abs() > 1e-5  # more than float32 rounding apart: a real mismatch
    if bool(bad.any()):
        p = int(bad.nonzero()[0])
        raise CheckFailed(
            f"position {p}: expected row {int(expected[p])} (cosine {float(exp_sims[p]):.6f}), got row {got[p]} "
            f"(cosine {float(got_sims[p]):.6f}). Expected the first {min(k, 8)}: {expected[:8].tolist()}, "
            f"got {got[:8]}." + named_mistake(out, _neighbor_mistakes(E, index, k, sims), atol=0, rtol=0))

    # Exact ties (the same float64 similarity): the lower index first, and the lowest ones kept at a cut.
    for p in range(k):
        tied = ((sims - got_sims[p]).abs() <= TIE).nonzero().flatten().tolist()
        tied = [j for j in tied if j != index]
        if len(tied) < 2:
            continue
        chosen = [j for j in got if j in tied]
        if chosen != sorted(tied)[:len(chosen)]:
            raise CheckFailed(
                f"rows {sorted(tied)} have exactly the same cosine similarity ({float(got_sims[p]):.6f}: duplicate "
                f"or rescaled rows). Ties come lower index first, so your answer should hold "
                f"{sorted(tied)[:len(chosen)]} in that order; it holds {chosen}. torch.topk promises no order among "
                "equal values: sort with torch.sort(..., descending=True, stable=True) instead.")


# ---------------------------------------------------------------- the chapter
