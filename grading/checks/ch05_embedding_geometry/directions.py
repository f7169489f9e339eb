"""Chapter 05 stretch: remove_top_directions."""
from __future__ import annotations

import torch

from ...i18n import _
from ..compare import expect_tensor
from ..fixtures import random_tensor
from ..memo import Later, evaluated, per_input
from .pca import EXAMPLE, _data, _real_rows, _sklearn, _uncentred_components, _wide


# ---------------------------------------------------------------- stretch: remove_top_directions


def _equal_top_pair(n: int = 40, scales: tuple[float, ...] = (3.0, 3.0, 1.0, 0.5, 0.2), seed: int = 91) -> torch.Tensor:
    """Data whose two largest variances are EXACTLY equal (float64): the top plane is unique, its basis is not."""
    d = len(scales)
    basis = torch.cat([torch.ones(n, 1, dtype=torch.float64), random_tensor((n, d), seed, dtype=torch.float64)], 1)
    Q = torch.linalg.qr(basis)[0][:, 1:]  # orthonormal columns, orthogonal to the ones vector: already centred
    R = torch.linalg.qr(random_tensor((d, d), seed + 1, dtype=torch.float64))[0]
    return Q * torch.tensor(scales, dtype=torch.float64) @ R + random_tensor((d,), seed + 2, 5.0, torch.float64)


REMOVE_INPUTS = {
    _("the docstring example, 4 x 2, k = 1 (float32)"): lambda: (torch.tensor(EXAMPLE), 1),
    _("60 x 5, k = 2"): lambda: (_data(60, [5.0, 3.0, 1.5, 0.8, 0.3], 92), 2),
    _("k = 0 only centres"): lambda: (_data(30, [2.0, 1.0, 0.5], 93, mean_size=4.0), 0),
    _("k = d removes everything: all zeros"): lambda: (_data(25, [3.0, 2.0, 1.0, 0.5], 94), 4),
    _("equal top variances, k = 2: the plane is unique, its basis is not"): lambda: (_equal_top_pair(), 2),
    _("a mean far from 0 (size 30), 80 x 6, k = 3"): lambda: (_data(80, [3.0, 2.0, 1.0, 0.5, 0.25, 0.1], 95, mean_size=30.0), 3),
    _("wide data, 8 rows x 20 columns, k = 3"): lambda: (_wide(96), 3),
    _("float32 with a mean of size 1000, 200 x 5, k = 2"): lambda: (
        _data(200, [3.0, 2.0, 1.0, 0.5, 0.25], 97, torch.float32, mean_size=1000.0), 2),
    _("the course model's E, rows 1000-2999 [2000, 576] float32, k = 5 (all-but-the-top's D ~ d / 100)"):
        lambda: (_real_rows(), 5),
}


@per_input
def _reference_removed(X: torch.Tensor, k: int) -> torch.Tensor:
    """X minus scikit-learn's rank-k PCA reconstruction (mean + projections @ components), float64."""
    proj, comps, _ratios, _singular = _sklearn(X)
    return X.double() - X.double().mean(0) - proj[:, :k] @ comps[:k]


@per_input
def _remove_top_mistakes(X: torch.Tensor, k: int) -> list:
    """The known mistakes of remove_top_directions with their wrong results on (X, k)."""
    X64 = X.double()
    mean = X64.mean(0)
    _proj, comps, _ratios, _singular = _sklearn(X)
    expected = _reference_removed(X, k)
    centred = X64 - mean
    d = comps.shape[0]

    def removed(directions: torch.Tensor, base: torch.Tensor = centred, of: torch.Tensor = centred) -> torch.Tensor:
        return (base - (of @ directions.T) @ directions).to(X.dtype)

    mistakes = [
        (_("PCA without centring: subtract the mean row first, from the data you return as well as before the SVD "
           "(without it the first direction points at the mean)."),
         lambda: removed(_uncentred_components(X, k) if k else comps[:0], X64, X64)),
        (_("you added the mean back (or subtracted the projections from the uncentred X): all-but-the-top returns the "
           "CENTRED data minus its projections, column mean 0."), lambda: (expected + mean).to(X.dtype)),
        (_("you removed the k directions of SMALLEST variance: torch.linalg.eigh returns eigenvalues in increasing "
           "order; the SVD's Vh rows come largest first."), lambda: removed(comps.flip(0)[:k])),
        (_("you returned the projection on the top directions (the part to remove), not what is left after removing "
           "it."), lambda: ((centred @ comps[:k].T) @ comps[:k]).to(X.dtype)),
        (_("you projected the UNCENTRED rows on the directions: remove (X - mean) @ V.T @ V from X - mean."),
         lambda: removed(comps[:k], centred, X64)),
        (_("you used the directions as columns: the top-k directions are the first k ROWS of Vh (Vh[:k]), not its "
           "first k columns."), lambda: removed(torch.linalg.svd(centred, full_matrices=False)[2][:, :k].T)
         if k and centred.shape[1] == d else None),
    ]
    if k == 0:
        mistakes.append((_("with k = 0 you removed every direction: a slice such as [:, -k:] is [:, 0:], all of them, "
                           "when k = 0. Nothing is removed for k = 0: return the centred data."),
                         torch.zeros_like(expected).to(X.dtype)))
    for kk, word in ((k - 1, "k - 1"), (k + 1, "k + 1")):
        if 0 <= kk <= d:
            mistakes.append((_("an off-by-one: you removed {word} directions.", word=word),
                             lambda kk=kk: removed(comps[:kk])))
    return evaluated(mistakes)


def _check_remove_top(out, inputs):
    X, k = inputs
    X64 = X.double()
    scale = float((X64 - X64.mean(0)).abs().max())
    atol = scale * (1e-4 if X.dtype != torch.float64 else 1e-9)
    expect_tensor(out, _reference_removed(X, k).to(X.dtype), _("X with its top {k} directions removed", k=k), atol=atol,
                  rtol=0, mistakes=Later(_remove_top_mistakes, X, k))
