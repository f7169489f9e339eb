"""Chapter 06 stretch: fit_tuned_lens."""
from __future__ import annotations

import torch

from ...i18n import _, verbatim
from ..compare import expect_tensor
from ..fixtures import course_model, random_ids, random_tensor
from ..memo import per_input
from .common import FRANCE, _residual_stream, tiny_lens_model


# ---------------------------------------------------------------- stretch: fit_tuned_lens


@torch.no_grad()
def _block_states(model, input_ids: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(residual stream after `layer` blocks, the last block's output (final norm's input)), every position but
    the first (the attention sink), flattened to rows [N, d]; from forward hooks, as judge_lens records them."""
    states, _ = _residual_stream(model, input_ids)
    rows = lambda s: s[:, 1:].reshape(-1, s.shape[-1]).float().clone()  # noqa: E731
    return rows(states[layer]), rows(states[-1])


def _affine_data(n: int, d_in: int, d_out: int, seed: int, noise: float = 0.1, mean: float = 1.0,
                 dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    X = random_tensor((n, d_in), seed, dtype=torch.float64) + random_tensor((d_in,), seed + 1, mean, torch.float64)
    A = random_tensor((d_in, d_out), seed + 2, dtype=torch.float64)
    Y = X @ A + random_tensor((d_out,), seed + 3, 2.0, torch.float64) + noise * random_tensor((n, d_out), seed + 4,
                                                                                          dtype=torch.float64)
    return X.to(dtype), Y.to(dtype)


def _tuned_tiny() -> tuple:
    model = tiny_lens_model("llama", 3, num_layers=3)
    return (*_block_states(model, random_ids(96, (8, 17), 98), 1), 0.0)


def _tuned_course() -> tuple:
    model, tok = course_model()
    texts = [FRANCE, "The cat sat on the mat and looked at the dog.", "One, two, three, four, five, six, seven",
             "In 1969 the first people walked on the Moon."]
    parts = [_block_states(model, tok(t, return_tensors="pt").input_ids, 10) for t in texts]
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts]), 1.0


TUNED_INPUTS = {
    _("the docstring example: y = 2x + 1, ridge 0"): lambda: (
        torch.tensor([[0.0], [1.0], [2.0], [3.0]]), torch.tensor([[1.0], [3.0], [5.0], [7.0]]), 0.0),
    _("50 rows, d_in = 4 -> d_out = 3 with noise, ridge 0 (plain least squares)"): lambda: (
        *_affine_data(50, 4, 3, 99), 0.0),
    _("30 rows, 6 -> 6, ridge 0.5"): lambda: (*_affine_data(30, 6, 6, 100, noise=0.5), 0.5),
    _("fewer rows than dims (10 rows, 20 -> 20): only the ridge makes it unique, ridge 1.0"): lambda: (
        *_affine_data(10, 20, 20, 101), 1.0),
    _("a huge ridge (1e8): A ~ 0 and b ~ the mean of h_final (the bias is not penalised)"): lambda: (
        *_affine_data(40, 5, 5, 102, mean=3.0), 1e8),
    _("float32 states with a mean of size 300 and spread 1, 60 rows, 5 -> 5, ridge 1e-3 (returned as float32)"):
        lambda: (*_affine_data(60, 5, 5, 103, mean=300.0, dtype=torch.float32), 1e-3),
    _("a tiny Llama's states after block 1 -> its last block's output, 128 rows x 32, ridge 0"): _tuned_tiny,
    _("the course model: states after block 10 -> block 30's output, 4 prompts (about 40 rows x 576), ridge 1.0"):
        _tuned_course,
}


@per_input
def _ridge_reference(X: torch.Tensor, Y: torch.Tensor, ridge: float, penalise_bias: bool = False,
                     center: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Ridge regression by least squares on an augmented system (no normal equations), float64."""
    X, Y = X.double(), Y.double()
    n, d = X.shape
    if center and not penalise_bias:
        xm, ym = X.mean(0), Y.mean(0)
        rows = torch.cat([X - xm, ridge ** 0.5 * torch.eye(d, dtype=torch.float64)])
        target = torch.cat([Y - ym, torch.zeros(d, Y.shape[1], dtype=torch.float64)])
        A = torch.linalg.lstsq(rows, target, driver="gelsd").solution
        return A, ym - xm @ A
    ones = torch.ones(n, 1, dtype=torch.float64)
    Xa = torch.cat([X, ones], 1) if center else X
    k = Xa.shape[1]
    rows = torch.cat([Xa, ridge ** 0.5 * torch.eye(k, dtype=torch.float64)])
    target = torch.cat([Y, torch.zeros(k, Y.shape[1], dtype=torch.float64)])
    sol = torch.linalg.lstsq(rows, target, driver="gelsd").solution
    return (sol[:-1], sol[-1]) if center else (sol, torch.zeros(Y.shape[1], dtype=torch.float64))


def _check_tuned_lens(out, inputs):
    from ..compare import expect_tuple

    X, Y, ridge = inputs
    A_ref, b_ref = _ridge_reference(X, Y, ridge)
    A, b = expect_tuple(out, 2, verbatim("fit_tuned_lens(h_layer, h_final, ridge) -> (A, b)"))
    n = X.shape[0]
    X64, Y64 = X.double(), Y.double()
    low = X.dtype != torch.float64
    tol_a = (1e-4 if low else 1e-8) * max(1.0, float(A_ref.abs().max()))
    tol_b = (1e-4 if low else 1e-8) * max(1.0, float(b_ref.abs().max()), float((X64.mean(0) @ A_ref).abs().max()))

    zero_b = isinstance(b, torch.Tensor) and bool((b == 0).all())  # which of the two uncentred fits was made

    def A_of(**kw):
        return _ridge_reference(X, Y, **kw)

    def float32_normal_equations():
        Xa = torch.cat([X.float(), torch.ones(n, 1)], 1)
        gram = Xa.T @ Xa + ridge * torch.diag(torch.tensor([1.0] * X.shape[1] + [0.0]))
        sol = torch.linalg.solve(gram, Xa.T @ Y.float())
        return sol[:-1], sol[-1]

    a_mistakes = [
        (_("the ridge penalised the bias too (a column of ones inside the penalty): b is not penalised; centre X "
           "and h_final, solve for A, then b = mean(h_final) - mean(h_layer) @ A."),
         lambda: A_of(ridge=ridge, penalise_bias=True)[0].to(X.dtype)),
        (_("no bias term: you fitted h_layer @ A alone (no centring, b = 0); the lens is affine, with a bias."),
         lambda: A_of(ridge=ridge, center=False)[0].to(X.dtype) if zero_b else None),
        (_("you solved for A on the raw states (no centring, no column of ones) and only then set b: A must be fitted "
           "on centred h_layer and h_final (or with a column of ones), then b = mean(h_final) - mean(h_layer) @ A."),
         lambda: A_of(ridge=ridge, center=False)[0].to(X.dtype) if not zero_b else None),
        (_("your A is transposed: the prediction is h_layer @ A + b, so A has shape [d_in, d_out] (the solution of "
           "(X^T X + ridge I) A = X^T Y), not its transpose."), lambda: A_ref.T.to(X.dtype)),
        (_("the ridge term is missing (or not added to the diagonal of X^T X)."),
         lambda: A_of(ridge=0.0)[0].to(X.dtype) if ridge > 0 and n > X.shape[1] else None),
        (_("you scaled the ridge by the number of rows (a mean-squared-error objective): here the penalty is added "
           "to the SUM of squared errors, so X^T X + ridge * I."), lambda: A_of(ridge=ridge * n)[0].to(X.dtype)
         if ridge > 0 else None),
        (_("you solved the normal equations in float32: with states far from 0, X^T X loses most of its digits. "
           "Centre first and compute in float64, then cast back."),
         lambda: float32_normal_equations()[0] if low else None),
    ]
    expect_tensor(A, A_ref.to(X.dtype), "A", atol=tol_a, rtol=0, mistakes=a_mistakes)
    expect_tensor(b, b_ref.to(X.dtype), "b", atol=tol_b, rtol=0, mistakes=[
        (_("b = mean(h_final) - mean(h_layer): the bias must remove the mean of the PREDICTION, "
           "b = mean(h_final) - mean(h_layer) @ A."), lambda: (Y64.mean(0) - X64.mean(0)).to(X.dtype)
         if X.shape[1] == Y.shape[1] else None),
        (_("b = mean(h_final): the bias must also remove the mean of h_layer @ A (b = mean(h_final) - "
           "mean(h_layer) @ A)."), lambda: Y64.mean(0).to(X.dtype)),
    ])
