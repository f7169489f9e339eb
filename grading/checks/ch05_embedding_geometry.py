"""Checks for chapter 05, embedding geometry and PCA (exercises/ch05_embedding_geometry.py).

References: brute-force cosine similarity in float64 for the neighbours, scikit-learn's PCA for the
components, projections and explained-variance ratios. Principal components are compared up to sign.
"""
from __future__ import annotations

import torch

from .compare import CheckFailed, expect_tensor, expect_tuple, named_mistake
from .fixtures import course_embedding, course_ids, random_table, random_tensor, ranked_ids
from ..model import Case, Chapter, Exercise, Question

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


# ---------------------------------------------------------------- inputs: pca, explained_variance_ratio


def _data(n: int, scales: list[float], seed: int, dtype=torch.float64, mean_size: float = 1.0) -> torch.Tensor:
    """n rows whose variance along random orthogonal directions is spread as `scales`, plus a random mean."""
    d = len(scales)
    Q, _ = torch.linalg.qr(random_tensor((d, d), seed, dtype=torch.float64))
    X = random_tensor((n, d), seed + 1000, dtype=torch.float64) * torch.tensor(scales, dtype=torch.float64) @ Q
    return (X + random_tensor((d,), seed + 2000, scale=mean_size, dtype=torch.float64)).to(dtype)


def _wide(seed: int) -> torch.Tensor:
    return _data(8, [6.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.7, 0.5] + [0.0] * 12, seed)


def _real_rows() -> torch.Tensor:
    return course_embedding()[1000:3000].clone()


EXAMPLE = [[0., 0.], [2., 0.], [4., 1.], [6., 1.]]

PCA_INPUTS = {
    "the docstring example, 4 x 2, k = 1 (float32)": lambda: (torch.tensor(EXAMPLE), 1),
    "60 x 5, k = 2": lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 61), 2),
    "k = 1, 40 x 6 float32": lambda: (_data(40, [4.0, 2.0, 1.0, 0.6, 0.3, 0.1], 62, torch.float32), 1),
    "k = d: every component, the ratios sum to 1": lambda: (_data(50, [3.0, 2.0, 1.2, 0.5], 63), 4),
    "a large mean (about 30 per coordinate): PCA without centring shows here":
        lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 64, mean_size=30.0), 3),
    "wide data, 8 rows x 20 columns, k = 3": lambda: (_wide(65), 3),
    "float32 with a large mean (about 1000 per coordinate, spread about 1), 200 x 5, k = 2":
        lambda: (_data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 66, torch.float32, mean_size=1000.0), 2),
    "the course model's E, rows 1000-2999 [2000, 576] float32, k = 3": lambda: (_real_rows(), 3),
}

RATIO_INPUTS = {
    "the docstring example, 4 x 2 (float32)": lambda: (torch.tensor(EXAMPLE),),
    "60 x 5": lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 71),),
    "a large mean (about 30 per coordinate): PCA without centring shows here":
        lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 72, mean_size=30.0),),
    "wide data, 8 rows x 20 columns: min(n, d) = 8 values": lambda: (_wide(73),),
    "100 x 10 float32 keeps float32": lambda: (_data(100, [2.0 ** -i for i in range(10)], 74, torch.float32),),
    "float32 with a large mean (about 1000 per coordinate, spread about 1), 200 x 5":
        lambda: (_data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 75, torch.float32, mean_size=1000.0),),
    "the course model's E, rows 1000-2999 [2000, 576] float32: 576 values": lambda: (_real_rows(),),
}


_REFERENCE_CACHE: dict[bytes, tuple] = {}
REFERENCE_CACHE_SIZE = 24  # more than the PCA inputs of all of this chapter's cases (at most ~25 MB each)


def _sklearn(X: torch.Tensor):
    """scikit-learn's PCA of X in float64, all components: (projections, components, ratios, singular values)."""
    import hashlib

    from sklearn.decomposition import PCA
    from threadpoolctl import threadpool_limits

    key = hashlib.sha256(X.contiguous().numpy().tobytes()).digest() + str((X.dtype, tuple(X.shape))).encode()
    if key not in _REFERENCE_CACHE:
        X64 = X.double().numpy()
        # The judge limits torch to one thread, not numpy's BLAS: without this, LAPACK threads fight on a busy machine
        with threadpool_limits(1):
            p = PCA(svd_solver="full").fit(X64)
        as_t = torch.from_numpy
        if len(_REFERENCE_CACHE) >= REFERENCE_CACHE_SIZE:  # the oldest goes; a class cycles through every case
            del _REFERENCE_CACHE[next(iter(_REFERENCE_CACHE))]
        _REFERENCE_CACHE[key] = (as_t(p.transform(X64)), as_t(p.components_), as_t(p.explained_variance_ratio_),
                                 as_t(p.singular_values_))
    return _REFERENCE_CACHE[key]


def _tolerances(X: torch.Tensor) -> tuple[float, float]:
    """(atol for unit vectors and ratios, relative tolerance for projections) for X's dtype."""
    return (1e-4, 1e-4) if X.dtype != torch.float64 else (1e-7, 1e-7)


def _uncentred_components(X: torch.Tensor, k: int) -> torch.Tensor:
    """The top-k right singular vectors of X itself, as PCA without centring would find them."""
    return torch.linalg.svd(X.double(), full_matrices=False)[2][:k]


def _uncentred_ratio(X: torch.Tensor, k: int) -> torch.Tensor:
    S = torch.linalg.svdvals(X.double())
    return (S ** 2 / (S ** 2).sum())[:k]


def _align(rows: torch.Tensor, to: torch.Tensor) -> torch.Tensor:
    """Flip each row of `rows` so it points the same way as the matching row of `to` (signs are arbitrary)."""
    signs = torch.sign((rows.double() * to.double()).sum(dim=1))
    signs[signs == 0] = 1
    return rows.double() * signs[:, None]


def _ratio_mistakes(X: torch.Tensor, k: int, full_ratio: torch.Tensor, S: torch.Tensor):
    yield ("PCA without centring: subtract the mean row before the SVD. Without it the first direction points at "
           "the mean and takes most of the 'variance'.", lambda: _uncentred_ratio(X, k).to(X.dtype))
    yield ("you used the singular values themselves: the variance along a component is S**2 / (n - 1), so the "
           "ratio is S[i]**2 / sum(S**2).", lambda: (S / S.sum())[:k].to(X.dtype))
    yield ("you divided by the variance of the k kept components only: the ratio is a share of the TOTAL "
           "variance, summed over all components.", lambda: (full_ratio[:k] / full_ratio[:k].sum()).to(X.dtype))
    yield ("you returned the variances S**2 / (n - 1), not their share of the total variance.",
           lambda: (S[:k] ** 2 / (X.shape[0] - 1)).to(X.dtype))
    yield ("your order is reversed: torch.linalg.eigh returns eigenvalues in INCREASING order; the largest "
           "variance comes first.", lambda: full_ratio[:k].flip(0).to(X.dtype))
    yield ("you kept the k SMALLEST components: torch.linalg.eigh returns eigenvalues in increasing order.",
           lambda: full_ratio.flip(0)[:k].to(X.dtype))


def _check_ratio_values(got, X: torch.Tensor, k: int, what: str) -> None:
    _, _, full_ratio, S = _sklearn(X)
    atol, _ = _tolerances(X)
    expect_tensor(got, full_ratio[:k].to(X.dtype), what, atol=atol, rtol=0,
                  mistakes=_ratio_mistakes(X, k, full_ratio, S))


def _naming_cancellation(check):
    """On float32 data whose mean dwarfs its spread, a failure is most likely a one-pass covariance: say so."""
    def wrapped(out, inputs):
        try:
            check(out, inputs)
        except CheckFailed as exc:
            X = inputs[0]
            spread = float(X.double().std(dim=0).max()) if X.shape[0] > 1 else 0.0
            if X.dtype == torch.float32 and float(X.double().mean(dim=0).abs().max()) > 100 * spread \
                    and "Likely mistake" not in str(exc):
                raise CheckFailed(f"{exc}\n  Likely mistake: catastrophic cancellation. This float32 data has a mean "
                                  "far larger than its spread: a covariance formed in one pass (X.T @ X / n - mean "
                                  "mean^T) subtracts two huge, nearly equal numbers and keeps almost none of the digits "
                                  "of their difference. Centre first (X - X.mean(0)), then take the SVD.") from None
            raise
    return wrapped


def _check_pca(out, inputs):
    X, k = inputs
    n, d = X.shape
    proj, comps, ratio = expect_tuple(out, 3, "pca(X, k) -> (projections, components, ratio)")
    for value, name in ((proj, "projections"), (comps, "components"), (ratio, "ratio")):
        if not isinstance(value, torch.Tensor):
            raise CheckFailed(f"{name}: expected a tensor, got {type(value).__name__}.")
    atol, rtol = _tolerances(X)
    all_proj, all_comps, _, S = _sklearn(X)
    ref_proj, ref_comps = all_proj[:, :k], all_comps[:k]

    _check_ratio_values(ratio, X, k, "explained-variance ratio [k]")

    if comps.shape == (d, k) and (k != d or torch.allclose(_align(comps.T, ref_comps), ref_comps, atol=atol)):
        raise CheckFailed(f"components: expected shape [{k}, {d}] with one component per ROW; yours are the columns "
                          "of a [d, k] matrix (Vh[:k] is right; V[:, :k] or eigenvectors need a .T).")
    if comps.shape != (k, d) or comps.dtype != X.dtype:
        raise CheckFailed(f"components: expected shape [{k}, {d}] and dtype {X.dtype}, got {list(comps.shape)} "
                          f"and {comps.dtype}.")
    aligned = _align(comps, ref_comps)

    def uncentred():
        return _align(_uncentred_components(X, k), aligned)

    def smallest():
        return _align(all_comps.flip(0)[:k], aligned)

    expect_tensor(aligned.to(X.dtype), ref_comps.to(X.dtype), "components, each compared up to its sign",
                  atol=atol, rtol=0, mistakes=[
                      ("PCA without centring: subtract the mean row before the SVD.", uncentred),
                      ("you kept the directions of SMALLEST variance (torch.linalg.eigh sorts increasingly).",
                       smallest)])

    signs = torch.sign((comps.double() * ref_comps).sum(dim=1))
    signs[signs == 0] = 1
    if proj.shape != (n, k):
        raise CheckFailed(f"projections: expected shape [{n}, {k}] (one row per sample, one column per "
                          f"component), got {list(proj.shape)}.")
    proj_aligned = (proj.double() * signs).to(X.dtype)
    scale = max(1.0, float(ref_proj.abs().max()))
    X64 = X.double()
    mistakes = [
        ("you projected the raw X: measure from the mean row, (X - mean) @ components.T.",
         lambda: (X64 @ ref_comps.T).to(X.dtype)),
        ("you returned U[:, :k] alone: the coordinates are U[:, :k] * S[:k] (or (X - mean) @ components.T).",
         lambda: (ref_proj / S[:k]).to(X.dtype)),
        ("a column of your projections has the opposite sign of its component: compute the projections from the "
         "components you return.", lambda: (ref_proj * -1).to(X.dtype)),
    ]
    if k > 1:
        for i in range(k):
            flipped = ref_proj.clone()
            flipped[:, i] *= -1
            mistakes.append((f"column {i} of your projections has the opposite sign of component {i}: compute the "
                             "projections from the components you return.", flipped.to(X.dtype)))
    expect_tensor(proj_aligned, ref_proj.to(X.dtype), "projections (signs matched to your components)",
                  atol=rtol * scale, rtol=0, mistakes=mistakes)


def _check_full_ratio(out, inputs):
    (X,) = inputs
    m = min(X.shape)
    if isinstance(out, torch.Tensor) and out.dim() == 1 and out.shape[0] == max(X.shape) != m:
        raise CheckFailed(f"expected {m} values (min(n, d) = min{tuple(X.shape)}), got {out.shape[0]}. With fewer "
                          "rows than columns there are only n non-trivial components: use the SVD of the centred "
                          "X (torch.linalg.svdvals), not the eigenvalues of the d x d covariance.")
    _check_ratio_values(out, X, m, f"explained-variance ratio [{m}]")


# ---------------------------------------------------------------- the chapter

# ---------------------------------------------------------------- stretch: remove_top_directions


def _equal_top_pair(n: int = 40, scales: tuple[float, ...] = (3.0, 3.0, 1.0, 0.5, 0.2), seed: int = 91) -> torch.Tensor:
    """Data whose two largest variances are EXACTLY equal (float64): the top plane is unique, its basis is not."""
    d = len(scales)
    basis = torch.cat([torch.ones(n, 1, dtype=torch.float64), random_tensor((n, d), seed, dtype=torch.float64)], 1)
    Q = torch.linalg.qr(basis)[0][:, 1:]  # orthonormal columns, orthogonal to the ones vector: already centred
    R = torch.linalg.qr(random_tensor((d, d), seed + 1, dtype=torch.float64))[0]
    return Q * torch.tensor(scales, dtype=torch.float64) @ R + random_tensor((d,), seed + 2, 5.0, torch.float64)


REMOVE_INPUTS = {
    "the docstring example, 4 x 2, k = 1 (float32)": lambda: (torch.tensor(EXAMPLE), 1),
    "60 x 5, k = 2": lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 92), 2),
    "k = 0 only centres": lambda: (_data(30, [2.0, 1.0, 0.5], 93, mean_size=4.0), 0),
    "k = d removes everything: all zeros": lambda: (_data(25, [3.0, 2.0, 1.0, 0.5], 94), 4),
    "equal top variances, k = 2: the plane is unique, its basis is not": lambda: (_equal_top_pair(), 2),
    "a mean far from 0 (size 30), 80 x 6, k = 3": lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 95, mean_size=30.0), 3),
    "wide data, 8 rows x 20 columns, k = 3": lambda: (_wide(96), 3),
    "float32 with a mean of size 1000, 200 x 5, k = 2": lambda: (
        _data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 97, torch.float32, mean_size=1000.0), 2),
    "the course model's E, rows 1000-2999 [2000, 576] float32, k = 5 (all-but-the-top's D ~ d / 100)":
        lambda: (_real_rows(), 5),
}


def _reference_removed(X: torch.Tensor, k: int) -> torch.Tensor:
    """X minus scikit-learn's rank-k PCA reconstruction (mean + projections @ components), float64."""
    proj, comps, _, _ = _sklearn(X)
    return X.double() - X.double().mean(0) - proj[:, :k] @ comps[:k]


def _check_remove_top(out, inputs):
    X, k = inputs
    X64 = X.double()
    mean = X64.mean(0)
    proj, comps, _, _ = _sklearn(X)
    expected = _reference_removed(X, k)
    scale = float((X64 - mean).abs().max())
    atol = scale * (1e-4 if X.dtype != torch.float64 else 1e-9)
    centred = X64 - mean
    d = comps.shape[0]

    def removed(directions: torch.Tensor, base: torch.Tensor = centred, of: torch.Tensor = centred) -> torch.Tensor:
        return (base - (of @ directions.T) @ directions).to(X.dtype)

    uncentred = _uncentred_components(X, k) if k else comps[:0]
    mistakes = [
        ("PCA without centring: subtract the mean row first, from the data you return as well as before the SVD "
         "(without it the first direction points at the mean).", lambda: removed(uncentred, X64, X64)),
        ("you added the mean back (or subtracted the projections from the uncentred X): all-but-the-top returns the "
         "CENTRED data minus its projections, column mean 0.", lambda: (expected + mean).to(X.dtype)),
        ("you removed the k directions of SMALLEST variance: torch.linalg.eigh returns eigenvalues in increasing "
         "order; the SVD's Vh rows come largest first.", lambda: removed(comps.flip(0)[:k])),
        ("you returned the projection on the top directions (the part to remove), not what is left after removing it.",
         lambda: ((centred @ comps[:k].T) @ comps[:k]).to(X.dtype)),
        ("you projected the UNCENTRED rows on the directions: remove (X - mean) @ V.T @ V from X - mean.",
         lambda: removed(comps[:k], centred, X64)),
        ("you used the directions as columns: the top-k directions are the first k ROWS of Vh (Vh[:k]), not its "
         "first k columns.", lambda: removed(torch.linalg.svd(centred, full_matrices=False)[2][:, :k].T)
         if k and centred.shape[1] == d else None),
    ]
    for kk, word in ((k - 1, "k - 1"), (k + 1, "k + 1")):
        if 0 <= kk <= d:
            mistakes.append((f"an off-by-one: you removed {word} directions.", lambda kk=kk: removed(comps[:kk])))
    expect_tensor(out, expected.to(X.dtype), f"X with its top {k} directions removed", atol=atol, rtol=0,
                  mistakes=mistakes)


CHAPTER = Chapter(
    number="05",
    module="ch05_embedding_geometry",
    title="Embedding geometry and PCA",
    exercises=[
        Exercise(
            "cosine_neighbors", "the k rows most similar to one row by cosine, itself excluded -> LongTensor [k]",
            [Case(n, m, _check_neighbors) for n, m in NEIGHBOR_INPUTS.items()],
            hint="Cosine similarity = a.b / (|a| |b|): divide every row by its length (E.norm(dim=1, keepdim=True)), "
                 "then one matrix-vector product gives all similarities. Set the query's own similarity to -inf "
                 "and sort with torch.sort(..., descending=True, stable=True) so ties keep the lower index first.",
            uses_course_model=True,
        ),
        Exercise(
            "pca", "PCA by centring and SVD -> (projections [n, k], components [k, d], ratio [k])",
            [Case(n, m, _naming_cancellation(_check_pca)) for n, m in PCA_INPUTS.items()],
            hint="Centre X first (subtract the mean row). torch.linalg.svd(Xc, full_matrices=False) returns U, S, Vh: "
                 "one of them holds the directions as rows, largest variance first. The projections are the centred "
                 "rows measured along those directions, and the variance along component i is proportional to "
                 "S[i]**2.",
            uses_course_model=True,
        ),
        Exercise(
            "explained_variance_ratio", "share of the total variance per principal component -> [min(n, d)]",
            [Case(n, m, _naming_cancellation(_check_full_ratio)) for n, m in RATIO_INPUTS.items()],
            hint="The singular values S of the CENTRED data hold it all: the variance along component i is "
                 "S[i]**2 / (n - 1), and the ratio divides that by the sum over all components.",
            uses_course_model=True,
        ),
        Exercise(
            "remove_top_directions", "stretch: all-but-the-top: centre, remove the top-k principal directions",
            [Case(name, make, _naming_cancellation(_check_remove_top)) for name, make in REMOVE_INPUTS.items()],
            hint="Centre: C = X - X.mean(dim=0). The top-k directions are the first k rows of Vh in "
                 "torch.linalg.svd(C, full_matrices=False). Return C - (C @ V.T) @ V. The result does not depend on "
                 "the signs of the rows of V.",
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "You rank the neighbours of ' Monday' by the dot product E @ E[i] instead of the cosine. What "
                    "goes wrong?",
                 {"a": "nothing: the order is the same",
                  "b": "long rows rank high whatever their direction",
                  "c": "only that it is slower",
                  "d": "the token itself drops out of its own neighbour list"},
                 "5d83383c417047d6984d",
                 "Reread 'Cosine similarity, not the dot product' in notebook 05."),
        Question(2, "You run the SVD on X without subtracting the mean row, and the rows of X share a large mean. "
                    "The first 'component' then:",
                 {"a": "it becomes the direction of the smallest variance instead",
                  "b": "it becomes exactly zero, as the mean cancels it",
                  "c": "it points roughly along the mean, with an inflated share",
                  "d": "nothing changes, because the SVD centres X by itself"},
                 "25c57849f8c419bffa97",
                 "Reread 'PCA from scratch' in notebook 05."),
        Question(3, "After centring, Xc = U S Vh. The explained-variance ratio of component i is:",
                 {"a": "S[i]**2 / sum(S**2)",
                  "b": "S[i] / sum(S)",
                  "c": "S[i]**2 / (n - 1)",
                  "d": "S[i] / S[0], relative to the first"},
                 "b0875556694f6bcf57a5",
                 "Reread 'PCA from scratch' in notebook 05."),
        Question(4, "In this model the cosine of two random tokens is clearly positive on average, and about 0 once "
                    "the mean embedding is subtracted. What does that tell you?",
                 {"a": "most tokens in the vocabulary are near-synonyms of each other",
                  "b": "the quantisation to 8 bits broke the embeddings",
                  "c": "centring destroys what the vectors mean, so use raw cosines",
                  "d": "all rows share a mean direction that inflates raw cosines"},
                 "f66248a27b6c9c7f52bc",
                 "Reread 'Anisotropy' in notebook 05."),
        Question(5, "Your PCA returns component -v with projection column -p where scikit-learn returns v and p. "
                    "Your answer is:",
                 {"a": "wrong: a component's first entry must be positive",
                  "b": "equally right: v and -v span the same axis",
                  "c": "right only if you also negate its explained-variance ratio",
                  "d": "right only when k = 1"},
                 "74d143cdb91bc5cc9361",
                 "Reread 'PCA from scratch' (the sign of a component) in notebook 05."),
        Question(6, "After centring, the singular values of Xc are S = [4, 2, 2]. What share of the variance does "
                    "the first component explain?",
                 {"a": "0.50", "b": "0.67", "c": "0.33", "d": "0.80"},
                 "8f907e143f1644512164",
                 "Reread the explained-variance ratio in notebook 05: it uses the squared singular values."),
    ],
)
