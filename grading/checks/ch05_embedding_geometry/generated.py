"""Chapter 05 on generated inputs: the four exercises against float64 cosines and scikit-learn's PCA.

Every input is one the stubs' docstrings allow, in float32 and float64 (torch's SVD takes no half precision):
cosine_neighbors gets tables of 2 to 12 rows with duplicate and power-of-two scaled rows (exact ties), rows whose
lengths differ a millionfold, rows 1e-11 to 1e-9 long and non-contiguous views, every query row and k from 1 to n - 1. The PCA exercises get
data built with a known spectrum, X = U diag(S) V^T + mean (U's columns centred and orthonormal, S strictly
decreasing, each at least 1.5 times the next), so that every component they are asked for is unique up to its sign
and every top-k subspace is unique: shapes from 2 x 1 up, wide and tall, scales from 1e-3 to 1e3 and means far from
0 (in float32 at most 30 times the spread, where centring after a larger mean would lose the digits the tolerance
needs).
"""
from __future__ import annotations

from functools import lru_cache

import torch

from ...i18n import _
from ...model import Chapter
from ..properties import Example, Recipe, generated, ordered, recipes
from ..unchanged import argument_names
from .directions import _check_remove_top, _reference_removed
from .neighbors import _check_neighbors, ranking
from .pca import _check_full_ratio, _check_pca, _naming_cancellation, _sklearn

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
DTYPES = (torch.float32, torch.float64)


def _table(r: Recipe) -> torch.Tensor:
    """An [n, d] table (n >= 2) from the recipe: no row all zeros; duplicate and doubled rows for kind 'ties'."""
    n = max(2, int(torch.tensor(r.shape[:-1]).prod()) if len(r.shape) > 1 else 2)
    kind = r.kind if r.kind in ("normal", "ties", "row_scales") else "normal"
    E = Recipe((n, r.shape[-1]), torch.float64, kind, r.scale, "contiguous", r.seed).build()
    E[(E == 0).all(dim=1)] = 1.0
    norms = E.norm(dim=1)  # no row much shorter than the scale, but those made tiny below
    E = E * 2.0 ** torch.ceil(torch.log2(0.5 * r.scale / norms)).clamp(min=0)[:, None]  # powers of two: same direction
    if kind == "ties" and n > 2:
        E[-1] = 2 * E[0]  # the same direction, exactly (a power of two)
    if r.seed % 3 == 0:  # rows 1, 4, 7, ... about 1e-9, 1e-10, 1e-11 long: an epsilon on the lengths shows
        tiny = torch.arange(1, n, 3)
        target = 10.0 ** -(9 + torch.arange(len(tiny)) % 3).double()
        E[tiny] *= 2.0 ** torch.round(torch.log2(target / E[tiny].norm(dim=1)))[:, None]
    E = E.to(r.dtype)
    if r.layout == "transposed":
        return E.T.contiguous().T
    return torch.stack([E, E], dim=-1)[..., 0] if r.layout == "sliced" else E  # sliced: every other element


@lru_cache(maxsize=None)
def neighbor_examples() -> list[Example]:
    out: list[Example] = []
    for r in recipes(N, dtypes=DTYPES, max_v=6):
        E = _table(r)
        n = E.shape[0]
        out.append((E, r.seed % n, 1 + (r.seed // 7) % (n - 1)))
    out.append((torch.tensor([[1.0, 0.0], [10.0, 1.0], [0.0, 1.0], [2.0, 0.0]]), 0, 2))
    out.append((torch.tensor([[3.0, 4.0], [3.0, 4.0]], dtype=torch.float64), 1, 1))  # the copy, not the row itself
    return ordered(out)


def neighbor_reference(args: Example) -> torch.Tensor:
    E, index, k = args
    return ranking(E, index)[:k]


def spectrum_data(n: int, d: int, seed: int, dtype: torch.dtype, scale: float = 1.0, mean: float = 1.0,
                  layout: str = "contiguous") -> torch.Tensor:
    """[n, d] data whose centred singular values are S_i = scale * 2 ** -(0.6 i) (i < min(n - 1, d)), exactly up
    to rounding, plus a random mean row of size `mean`."""
    g = torch.Generator().manual_seed(seed)
    r = min(n - 1, d)
    basis = torch.cat([torch.ones(n, 1, dtype=torch.float64), torch.randn(n, r, generator=g, dtype=torch.float64)], 1)
    U = torch.linalg.qr(basis)[0][:, 1:r + 1]  # orthonormal, orthogonal to the ones vector: centred columns
    V = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))[0][:, :r]
    S = scale * 2.0 ** (-0.6 * torch.arange(r, dtype=torch.float64))
    X = (U * S) @ V.T + mean * torch.randn(d, generator=g, dtype=torch.float64)
    X = X.to(dtype)
    if layout == "transposed":
        return X.T.contiguous().T
    if layout == "sliced":
        return torch.stack([X, X], dim=-1)[..., 0]  # every other element of a [n, d, 2] tensor
    return X


def _spectra(n_examples: int) -> list[tuple[torch.Tensor, int]]:
    """(X, seed) pairs: shapes 2..9 x 1..7, both dtypes, every scale and layout."""
    out = []
    for r in recipes(n_examples, dtypes=DTYPES, max_v=7):
        n = 2 + (r.seed % 8)
        mean = (0.0, 1.0, 30.0, 1000.0)[r.seed % 4] if r.dtype == torch.float64 else (0.0, 1.0, 30.0)[r.seed % 3] * r.scale
        out.append((spectrum_data(n, r.shape[-1], r.seed, r.dtype, r.scale, mean, r.layout), r.seed))
    return out


@lru_cache(maxsize=None)
def pca_examples() -> list[Example]:
    out: list[Example] = [(X, 1 + seed % min(X.shape[0] - 1, X.shape[1])) for X, seed in _spectra(N)]
    out.append((torch.tensor([[0.0, 0.0], [2.0, 0.0], [4.0, 1.0], [6.0, 1.0]]), 1))
    out.append((spectrum_data(2, 1, 5, torch.float64), 1))  # 2 x 1, k = 1: every dim of size one kept
    return ordered(out)


@lru_cache(maxsize=None)
def ratio_examples() -> list[Example]:
    out: list[Example] = [(X,) for X, _seed in _spectra(N)]
    out.append((spectrum_data(2, 1, 6, torch.float64),))
    return ordered(out)


@lru_cache(maxsize=None)
def remove_examples() -> list[Example]:
    out: list[Example] = [(X, seed % (min(X.shape) + 1)) for X, seed in _spectra(N)]
    out.append((spectrum_data(3, 2, 7, torch.float64, mean=5.0), 0))  # k = 0 only centres
    return ordered(out)


def pca_reference(args: Example) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    X, k = args
    proj, comps, ratio, _s = _sklearn(X)
    return proj[:, :k].to(X.dtype), comps[:k].to(X.dtype), ratio[:k].to(X.dtype)


def ratio_reference(args: Example) -> torch.Tensor:
    X = args[0]
    return _sklearn(X)[2][:min(X.shape)].to(X.dtype)


def remove_reference(args: Example) -> torch.Tensor:
    return _reference_removed(*args).to(args[0].dtype)


# exercise -> (its examples, the chapter's check, the reference shown next to the learner's result)
GENERATED = {
    "cosine_neighbors": (neighbor_examples, _check_neighbors, neighbor_reference),
    "pca": (pca_examples, _naming_cancellation(_check_pca), pca_reference),
    "explained_variance_ratio": (ratio_examples, _naming_cancellation(_check_full_ratio), ratio_reference),
    "remove_top_directions": (remove_examples, _naming_cancellation(_check_remove_top), remove_reference),
}


def with_generated(chapter: Chapter) -> Chapter:
    """Give each exercise of GENERATED one more case: its generated inputs, checked as its named cases are."""
    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.name in GENERATED:
            ex.cases.append(generated(_("generated inputs (shapes, dtypes, ties, scales, views), smallest failure "
                                        "shown"), *GENERATED[ex.name], names=names.get(ex.name, [])))
    return chapter
