"""Chapter 05: cosine_neighbors on random tables and the course model's E."""
from __future__ import annotations

import torch

from ...i18n import _
from ..compare import CheckFailed, named_mistake
from ..fixtures import course_embedding, course_ids, random_table, random_tensor, ranked_ids
from ..memo import Later, evaluated, per_input


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


def _close_cosines():
    """Rows 3 and 8 have cosines 0.9 and 0.90003 with row 0: equal once rounded to 4 decimals, row 8 first."""
    E = -random_table(12, 4, 54, torch.float64).abs() - 0.5  # every other row points away from row 0
    E[:, 0] = -E[:, 0].abs() - 1.0
    E[0] = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    for row, c in ((3, 0.9), (8, 0.90003)):
        E[row] = torch.tensor([c, (1 - c * c) ** 0.5, 0.0, 0.0], dtype=torch.float64) * (row + 1)
    return E


def _opposite_row():
    """Row 5 is exactly -2 x row 0: its cosine with row 0 is -1, the smallest there is."""
    E = random_table(8, 3, 55, torch.float64)
    E[5] = -2 * E[0]
    return E


def _tiny_rows():
    """float32 rows of lengths 0.05 to 40 and four of 2e-11 to 1e-9 (cosines 0.99, 0.95, 0.8, -0.9 with row 0):
    an epsilon added to (or a floor on) the lengths shrinks those four cosines towards 0."""
    E = torch.zeros(10, 2, dtype=torch.float64)
    for row, (c, length) in enumerate(((1.0, 1.0), (0.3, 40.0), (0.95, 1e-9), (0.6, 1.0), (0.8, 3e-10), (-0.5, 2.0),
                                       (0.4, 0.05), (0.99, 2e-11), (0.1, 5.0), (-0.9, 1e-10))):
        E[row] = torch.tensor([c, (1 - c * c) ** 0.5], dtype=torch.float64) * length
    return E.float()


NEIGHBOR_INPUTS = {
    _("the docstring example: [[1, 0], [10, 1], [0, 1], [2, 0]], row 0, k = 2"):
        lambda: (torch.tensor([[1., 0.], [10., 1.], [0., 1.], [2., 0.]]), 0, 2),
    _("rows of very different lengths (0.01 to 100): cosine is not the dot product"): lambda: (_different_norms(), 4, 6),
    _("duplicate rows 2, 5, 9 and row 11 = 2 x row 2 tie: lower index first"): lambda: (_with_ties(), 0, 6),
    _("a tie cut by k: keep the lower indices of the tied rows"): lambda: (_with_ties(), 0, 2),
    _("the query row has copies: leave out the row itself, keep its copies"): lambda: (_with_ties(), 5, 4),
    _("k = 1, query is the last row"): lambda: (random_table(15, 4, 51), 14, 1),
    _("k = n - 1: every other row in order, negative similarities too"): lambda: (random_table(10, 3, 52), 0, 9),
    _("a float64 table"): lambda: (random_table(25, 5, 53, torch.float64), 7, 5),
    _("cosines 0.9 and 0.90003 (rows 3 and 8): the larger first, however close"): lambda: (_close_cosines(), 0, 3),
    _("k = n - 1 and a row exactly opposite the query (cosine -1): every other row, the query never"):
        lambda: (_opposite_row(), 0, 7),
    _("float32 rows as short as 2e-11 (no row is all zeros): their cosines count as they are"):
        lambda: (_tiny_rows(), 0, 6),
    _("the course model's E [49152, 576]: ' three', k = 5"): _real(" three", 5),
    _("the course model's E: ' Paris', k = 6"): _real(" Paris", 6),
    _("the course model's E: '<issue_start>' (id 8), an unused token with duplicate rows, k = 8"):
        lambda: (course_embedding(), 8, 8),
}

@per_input
def _unit_rows(E: torch.Tensor) -> torch.Tensor:
    E64 = E.double()
    return E64 / E64.norm(dim=1, keepdim=True)


@per_input
def _cosines(E: torch.Tensor, index: int) -> torch.Tensor:
    """Cosine similarity of every row with row `index`, in float64."""
    unit = _unit_rows(E)
    return unit @ unit[index]


def _ranked(scores: torch.Tensor, exclude: int | None, descending: bool = True) -> torch.Tensor:
    """Indices by score (ties within TIE: lower index first), `exclude` left out."""
    key = torch.round(scores / TIE) * TIE  # equal within rounding noise -> equal keys
    order = ranked_ids(key if descending else -key)
    return order[order != exclude] if exclude is not None else order


@per_input
def ranking(E: torch.Tensor, index: int) -> torch.Tensor:
    """Every row but `index`, most similar to it first (ties: lower index first)."""
    return _ranked(_cosines(E, index), index)


NORM_EPSILON = _("an epsilon added to the norms (E.norm(...) + 1e-8, or a floor such as clamp(min=eps) or "
                 "F.cosine_similarity's eps): a row a few 1e-9 long gets its cosine shrunk towards 0 and falls in "
                 "the ranking. No row is all zeros: divide by the lengths as they are.")


@per_input
def _neighbor_candidates(E: torch.Tensor, index: int, k: int) -> list:
    """The known mistakes with their wrong answers on this input."""
    return evaluated(_neighbor_mistakes(E, index, k, _cosines(E, index)))


def _neighbor_mistakes(E: torch.Tensor, index: int, k: int, sims: torch.Tensor):
    E64 = E.double()
    yield (_("dot product instead of cosine: E @ E[index] rewards long rows whatever their direction. Divide by "
             "both lengths (or normalise every row first), since only the direction should count."),
           lambda: _ranked(E64 @ E64[index], index)[:k])
    yield (_("you sorted in increasing order: the most similar row (largest cosine) comes first."),
           lambda: _ranked(sims, index, descending=False)[:k])
    for d in (3, 4, 5):
        yield (_("you rounded the cosines (to a few decimals, or to a lower precision) before sorting: close "
                 "neighbours became ties and the lower index won. Sort the cosines as they are."),
               lambda d=d: _ranked(torch.round(sims, decimals=d), index)[:k])
    lengths = E64.norm(dim=1)
    for eps in (1e-12, 1e-10, 1e-8, 1e-6):
        for floored in (lengths + eps, lengths.clamp(min=eps)):
            yield (NORM_EPSILON,
                   lambda floored=floored: _ranked((E64 @ E64[index]) / floored / floored[index], index)[:k])
    yield (_("you ranked by Euclidean distance: that mixes length into the ranking; cosine compares directions only."),
           lambda: _ranked(-(E64 - E64[index]).norm(dim=1), index)[:k])


def _check_neighbors(out, inputs):
    E, index, k = inputs
    n = E.shape[0]
    if not isinstance(out, torch.Tensor):
        raise CheckFailed(_("expected a LongTensor of {k} row indices, got {kind}.", k=k, kind=type(out).__name__))
    if out.dtype != torch.long:
        raise CheckFailed(_("expected dtype torch.int64 (row indices), got {dtype}. "
                            "torch.sort(...).indices and torch.topk(...).indices are already int64.",
                            dtype=str(out.dtype)))
    if out.shape != (k,):
        raise CheckFailed(_("expected shape [{k}] (k = {k} neighbours), got {shape}.", k=k, shape=str(list(out.shape))))
    got = out.tolist()
    if any(not 0 <= i < n for i in got):
        raise CheckFailed(_("row indices must be in [0, {n}); got {got}.", n=n, got=str(got[:10])))
    if index in got and float(_cosines(E, index)[ranking(E, index)[got.index(index)]]) <= 0:
        raise CheckFailed(_("your answer contains the query row {index} itself (at position {position}, among "
                            "rows whose cosine is <= 0). One possible cause: you masked the query with a finite "
                            "sentinel (-1, 0 or -10) instead of excluding it, and real rows tie with it or fall below "
                            "it. Use -inf (sims[index] = -inf) or leave the index out of the ranking.",
                            index=index, position=got.index(index)))
    if index in got:
        raise CheckFailed(_("your answer contains the query row {index} itself (at position {position}). "
                            "Exclude it by its index before ranking. (Dropping the first result is not enough: "
                            "a duplicate row ties with it and may come first.)", index=index, position=got.index(index)))
    if len(set(got)) != k:
        raise CheckFailed(_("a row appears twice in your answer: {got}.", got=str(got[:10])))

    sims = _cosines(E, index)
    expected = ranking(E, index)[:k]
    got_sims, exp_sims = sims[out], sims[expected]
    bad = (got_sims - exp_sims).abs() > 1e-5  # more than float32 rounding apart: a real mismatch
    if bool(bad.any()):
        p = int(bad.nonzero()[0])
        raise named_mistake(out, Later(_neighbor_candidates, E, index, k), atol=0, rtol=0, expected=expected).fail(
            _("position {p}: expected row {want} (cosine {want_cos:.6f}), got row {got} (cosine {got_cos:.6f}). "
              "Expected the first {m}: {first}, got {got_first}.", p=p, want=int(expected[p]),
              want_cos=float(exp_sims[p]), got=got[p], got_cos=float(got_sims[p]), m=min(k, 8),
              first=str(expected[:8].tolist()), got_first=str(got[:8])))

    # Exact ties (the same float64 similarity): the lower index first, and the lowest ones kept at a cut.
    for p in range(k):
        tied = ((sims - got_sims[p]).abs() <= TIE).nonzero().flatten().tolist()
        tied = [j for j in tied if j != index]
        if len(tied) < 2:
            continue
        chosen = [j for j in got if j in tied]
        if chosen != sorted(tied)[:len(chosen)]:
            raise CheckFailed(_(
                "rows {tied} have exactly the same cosine similarity ({cos:.6f}: duplicate or rescaled rows). Ties "
                "come lower index first, so your answer should hold {want} in that order; it holds {chosen}. "
                "torch.topk promises no order among equal values: sort with torch.sort(..., descending=True, "
                "stable=True) instead.", tied=str(sorted(tied)), cos=float(got_sims[p]),
                want=str(sorted(tied)[:len(chosen)]), chosen=str(chosen)))


# ---------------------------------------------------------------- the chapter
