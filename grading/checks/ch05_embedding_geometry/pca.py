"""Chapter 05: pca and explained_variance_ratio against scikit-learn's PCA."""
from __future__ import annotations

import torch

from ...i18n import _, verbatim
from ..compare import POSSIBLE_MARK, CheckFailed, expect_tensor, expect_tuple
from ..fixtures import course_embedding, random_tensor
from ..memo import per_input


# ---------------------------------------------------------------- inputs: pca, explained_variance_ratio


def _data(n: int, scales: list[float], seed: int, dtype=torch.float64, mean_size: float = 1.0) -> torch.Tensor:
    """n rows whose variance along random orthogonal directions is spread as `scales`, plus a random mean."""
    d = len(scales)
    Q, _r = torch.linalg.qr(random_tensor((d, d), seed, dtype=torch.float64))
    X = random_tensor((n, d), seed + 1000, dtype=torch.float64) * torch.tensor(scales, dtype=torch.float64) @ Q
    return (X + random_tensor((d,), seed + 2000, scale=mean_size, dtype=torch.float64)).to(dtype)


def _wide(seed: int) -> torch.Tensor:
    return _data(8, [6.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.7, 0.5] + [0.0] * 12, seed)


def _real_rows() -> torch.Tensor:
    return course_embedding()[1000:3000].clone()


EXAMPLE = [[0., 0.], [2., 0.], [4., 1.], [6., 1.]]

PCA_INPUTS = {
    _("the docstring example, 4 x 2, k = 1 (float32)"): lambda: (torch.tensor(EXAMPLE), 1),
    _("60 x 5, k = 2"): lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 61), 2),
    _("k = 1, 40 x 6 float32"): lambda: (_data(40, [4.0, 2.0, 1.0, 0.6, 0.3, 0.1], 62, torch.float32), 1),
    _("k = d: every component, the ratios sum to 1"): lambda: (_data(50, [3.0, 2.0, 1.2, 0.5], 63), 4),
    _("a large mean (about 30 per coordinate): PCA without centring shows here"):
        lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 64, mean_size=30.0), 3),
    _("wide data, 8 rows x 20 columns, k = 3"): lambda: (_wide(65), 3),
    _("float32 with a large mean (about 1000 per coordinate, spread about 1), 200 x 5, k = 2"):
        lambda: (_data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 66, torch.float32, mean_size=1000.0), 2),
    _("the course model's E, rows 1000-2999 [2000, 576] float32, k = 3"): lambda: (_real_rows(), 3),
}

RATIO_INPUTS = {
    _("the docstring example, 4 x 2 (float32)"): lambda: (torch.tensor(EXAMPLE),),
    _("60 x 5"): lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 71),),
    _("a large mean (about 30 per coordinate): PCA without centring shows here"):
        lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 72, mean_size=30.0),),
    _("wide data, 8 rows x 20 columns: min(n, d) = 8 values"): lambda: (_wide(73),),
    _("100 x 10 float32 keeps float32"): lambda: (_data(100, [2.0 ** -i for i in range(10)], 74, torch.float32),),
    _("float32 with a large mean (about 1000 per coordinate, spread about 1), 200 x 5"):
        lambda: (_data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 75, torch.float32, mean_size=1000.0),),
    _("the course model's E, rows 1000-2999 [2000, 576] float32: 576 values"): lambda: (_real_rows(),),
}


_REFERENCE_CACHE: dict[bytes, tuple] = {}
REFERENCE_CACHE_SIZE = 24  # more than the large PCA inputs of all of this chapter's named cases (at most ~25 MB each)
_SMALL_CACHE: dict[bytes, tuple] = {}  # the generated inputs' (a few hundred bytes each): never evict a large one
SMALL = 10_000  # elements


def _sklearn(X: torch.Tensor):
    """scikit-learn's PCA of X in float64, all components: (projections, components, ratios, singular values)."""
    import hashlib

    from sklearn.decomposition import PCA
    from threadpoolctl import threadpool_limits

    key = hashlib.sha256(X.contiguous().numpy().tobytes()).digest() + str((X.dtype, tuple(X.shape))).encode()
    cache = _SMALL_CACHE if X.numel() <= SMALL else _REFERENCE_CACHE
    if key not in cache:
        X64 = X.double().numpy()
        # The judge limits torch to one thread, not numpy's BLAS: without this, LAPACK threads fight on a busy machine
        with threadpool_limits(1):
            p = PCA(svd_solver="full").fit(X64)
        as_t = torch.from_numpy
        if len(cache) >= (REFERENCE_CACHE_SIZE if cache is _REFERENCE_CACHE else 100 * REFERENCE_CACHE_SIZE):
            del cache[next(iter(cache))]  # the oldest goes; a class cycles through every case
        cache[key] = (as_t(p.transform(X64)), as_t(p.components_), as_t(p.explained_variance_ratio_),
                      as_t(p.singular_values_))
    return cache[key]


def _tolerances(X: torch.Tensor) -> tuple[float, float]:
    """(atol for unit vectors and ratios, relative tolerance for projections) for X's dtype."""
    return (1e-4, 1e-4) if X.dtype != torch.float64 else (1e-7, 1e-7)


ROW_CENTRED = _("you centred each ROW by its own mean (a mean over dim=1): PCA subtracts the mean row, X.mean(dim=0), "
                 "from every row.")


@per_input
def _uncentred_components(X: torch.Tensor, k: int) -> torch.Tensor:
    """The top-k right singular vectors of X itself, as PCA without centring would find them."""
    return torch.linalg.svd(X.double(), full_matrices=False)[2][:k]


@per_input
def _uncentred_ratio(X: torch.Tensor, k: int) -> torch.Tensor:
    S = torch.linalg.svdvals(X.double())
    return (S ** 2 / (S ** 2).sum())[:k]


def _row_centred(X: torch.Tensor) -> torch.Tensor:
    """X with each ROW's own mean subtracted (mean over dim=1), the wrong axis for PCA's centring."""
    return X.double() - X.double().mean(dim=1, keepdim=True)


@per_input
def _row_centred_components(X: torch.Tensor, k: int) -> torch.Tensor:
    """The top-k components PCA finds when each ROW is centred by its own mean."""
    return _uncentred_components(_row_centred(X), k)


def _align(rows: torch.Tensor, to: torch.Tensor) -> torch.Tensor:
    """Flip each row of `rows` so it points the same way as the matching row of `to` (signs are arbitrary)."""
    signs = torch.sign((rows.double() * to.double()).sum(dim=1))
    signs[signs == 0] = 1
    return rows.double() * signs[:, None]


def _ratio_mistakes(X: torch.Tensor, k: int, full_ratio: torch.Tensor, S: torch.Tensor):
    yield (_("PCA without centring: subtract the mean row before the SVD. Without it the first direction points at "
             "the mean and takes most of the 'variance'."), lambda: _uncentred_ratio(X, k).to(X.dtype))
    yield (ROW_CENTRED, lambda: _uncentred_ratio(_row_centred(X), k).to(X.dtype))
    yield (_("you used the singular values themselves: the variance along a component is S**2 / (n - 1), so the "
             "ratio is S[i]**2 / sum(S**2)."), lambda: (S / S.sum())[:k].to(X.dtype))
    yield (_("you divided by the variance of the k kept components only: the ratio is a share of the TOTAL "
             "variance, summed over all components."), lambda: (full_ratio[:k] / full_ratio[:k].sum()).to(X.dtype))
    yield (_("you returned the variances S**2 / (n - 1), not their share of the total variance."),
           lambda: (S[:k] ** 2 / (X.shape[0] - 1)).to(X.dtype))
    yield (_("your order is reversed: torch.linalg.eigh returns eigenvalues in INCREASING order; the largest "
             "variance comes first."), lambda: full_ratio[:k].flip(0).to(X.dtype))
    yield (_("you kept the k SMALLEST components: torch.linalg.eigh returns eigenvalues in increasing order."),
           lambda: full_ratio.flip(0)[:k].to(X.dtype))


def _check_ratio_values(got, X: torch.Tensor, k: int, what: str) -> None:
    _proj, _comps, full_ratio, S = _sklearn(X)
    atol, _rtol = _tolerances(X)
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
            text = exc.message
            explained = bool(exc.mistake) or any(s in text for s in (POSSIBLE_MARK, "expected shape", "expected dtype",
                                                                     "expected a"))
            if X.dtype == torch.float32 and float(X.double().mean(dim=0).abs().max()) > 100 * spread \
                    and not explained:
                raise CheckFailed(text + "\n  " + _(
                    "One possible cause: catastrophic cancellation. This float32 data has a mean far larger than "
                    "its spread: a covariance formed in one pass (X.T @ X / n - mean mean^T) subtracts two huge, "
                    "nearly equal numbers and keeps almost none of the digits of their difference. Centre first "
                    "(X - X.mean(0)), then take the SVD.")) from None
            raise
    return wrapped


def _check_pca(out, inputs):
    X, k = inputs
    n, d = X.shape
    proj, comps, ratio = expect_tuple(out, 3, verbatim("pca(X, k) -> (projections, components, ratio)"))
    for value, name in ((proj, _("projections")), (comps, _("components")), (ratio, _("ratio"))):
        if not isinstance(value, torch.Tensor):
            raise CheckFailed(_("{name}: expected a tensor, got {kind}.", name=name, kind=type(value).__name__))
    atol, rtol = _tolerances(X)
    all_proj, all_comps, _ratios, S = _sklearn(X)
    ref_proj, ref_comps = all_proj[:, :k], all_comps[:k]

    _check_ratio_values(ratio, X, k, _("explained-variance ratio [k]"))

    rows_right = comps.shape == (k, d) and torch.allclose(_align(comps, ref_comps), ref_comps, atol=atol)
    if comps.shape == (d, k) and not rows_right and (
            k != d or torch.allclose(_align(comps.T, ref_comps), ref_comps, atol=atol)):
        raise CheckFailed(_("components: expected shape [{k}, {d}] with one component per ROW; yours are the columns "
                            "of a [d, k] matrix (Vh[:k] is right; V[:, :k] or eigenvectors need a .T).", k=k, d=d))
    if comps.shape != (k, d) or comps.dtype != X.dtype:
        raise CheckFailed(_("components: expected shape [{k}, {d}] and dtype {dtype}, got {shape} and {got_dtype}.",
                            k=k, d=d, dtype=str(X.dtype), shape=str(list(comps.shape)), got_dtype=str(comps.dtype)))
    aligned = _align(comps, ref_comps)

    def uncentred():
        return _align(_uncentred_components(X, k), aligned)

    def row_centred():
        return _align(_row_centred_components(X, k), aligned)

    def smallest():
        return _align(all_comps.flip(0)[:k], aligned)

    expect_tensor(aligned.to(X.dtype), ref_comps.to(X.dtype), _("components, each compared up to its sign"),
                  atol=atol, rtol=0, mistakes=[
                      (_("PCA without centring: subtract the mean row before the SVD."), uncentred),
                      (_("you kept the directions of SMALLEST variance (torch.linalg.eigh sorts increasingly)."),
                       smallest),
                      (ROW_CENTRED, row_centred)])

    signs = torch.sign((comps.double() * ref_comps).sum(dim=1))
    signs[signs == 0] = 1
    if proj.shape != (n, k):
        raise CheckFailed(_("projections: expected shape [{n}, {k}] (one row per sample, one column per "
                            "component), got {shape}.", n=n, k=k, shape=str(list(proj.shape))))
    proj_aligned = (proj.double() * signs).to(X.dtype)
    scale = max(1.0, float(ref_proj.abs().max()))
    X64 = X.double()
    mistakes = [
        (_("you projected the raw X: measure from the mean row, (X - mean) @ components.T."),
         lambda: (X64 @ ref_comps.T).to(X.dtype)),
        (_("you returned U[:, :k] alone: the coordinates are U[:, :k] * S[:k] (or (X - mean) @ components.T)."),
         lambda: (ref_proj / S[:k]).to(X.dtype)),
        (_("a column of your projections has the opposite sign of its component: compute the projections from the "
           "components you return."), lambda: (ref_proj * -1).to(X.dtype)),
    ]
    if k > 1:
        for i in range(k):
            flipped = ref_proj.clone()
            flipped[:, i] *= -1
            mistakes.append((_("column {i} of your projections has the opposite sign of component {i}: compute the "
                               "projections from the components you return.", i=i), flipped.to(X.dtype)))
    expect_tensor(proj_aligned, ref_proj.to(X.dtype), _("projections (signs matched to your components)"),
                  atol=rtol * scale, rtol=0, mistakes=mistakes)


def _check_full_ratio(out, inputs):
    (X,) = inputs
    m = min(X.shape)
    if isinstance(out, torch.Tensor) and out.dim() == 1 and out.shape[0] == max(X.shape) != m:
        raise CheckFailed(_("expected {m} values (min(n, d) = min{shape}), got {got}. With fewer "
                            "rows than columns there are only n non-trivial components: use the SVD of the centred "
                            "X (torch.linalg.svdvals), not the eigenvalues of the d x d covariance.",
                            m=m, shape=str(tuple(X.shape)), got=out.shape[0]))
    _check_ratio_values(out, X, m, _("explained-variance ratio [{m}]", m=m))
