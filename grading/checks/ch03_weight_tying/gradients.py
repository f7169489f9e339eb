"""Chapter 03: rows_with_gradient, the embedding rows a batch's loss reaches."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..compare import expect_equal
from ..fixtures import TinyLM, random_ids
from .tying import _built
from ...i18n import _


# ---------------------------------------------------------------- rows_with_gradient


def _lm_gradient(tied: bool) -> torch.Tensor:
    """The embedding's gradient after one backward pass of a toy LM on 2 x 12 random tokens."""
    model = _built(lambda: TinyLM(200, 16, tied), seed=3)
    ids = random_ids(200, (2, 13), 8)
    h = model.embed(ids[:, :-1])
    logits = model.head(model.norm(h + model.block(h)))
    F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten()).backward()
    return model.embed.weight.grad.detach()


def _cancelling_rows():
    v = random_ids(9, (30, 3), 21).float() + 1  # whole numbers 1..9, so the sums below are exact
    return torch.cat([v, -v], dim=1)  # every row sums to 0 exactly, but none is zero


def _negative_zeros():
    g = torch.zeros(5, 3)
    g[1] = -0.0
    g[3, 2] = 1.0
    return g


def _one_entry():
    g = torch.zeros(1000, 64)
    g[617, 63] = 1e-3
    return g


ROWS_INPUTS = {
    _("the docstring example"): lambda: torch.tensor([[0., 0.], [1., -1.], [0., 3.], [2., 5.], [4., 0.]]),
    _("tiny values count (2e-30 and 1e-9 are not zero)"):
        lambda: torch.tensor([[0., 0.], [0., 2e-30], [1e-9, 2e-9], [5., 0.], [6., 0.]]),
    _("rows that sum to zero but are not zero"): _cancelling_rows,
    _("-0.0 is zero"): _negative_zeros,
    _("one non-zero entry in the last column of row 617"): _one_entry,
    _("an all-zero gradient"): lambda: torch.zeros(8, 4),
    _("an empty vocabulary [0, 4]"): lambda: torch.zeros(0, 4),
    _("float64 entries of 1e-300 (no float32 can hold them) count"): lambda: torch.tensor(
        [[0.0, 1e-300], [0.0, 0.0], [-3e-310, 0.0], [1.0, 0.0]], dtype=torch.float64),
    _("float16 gradient"): lambda: torch.tensor([[0., 1e-5], [0., 0.], [-2., 0.]], dtype=torch.float16),
    _("untied tiny LM: the input embedding's gradient after one backward pass"): lambda: _lm_gradient(False),
    _("tied tiny LM: the shared matrix's gradient after one backward pass"): lambda: _lm_gradient(True),
}


def _check_rows(out, inputs):
    (grad,) = inputs
    expected = len(torch.unique(torch.nonzero(grad)[:, 0])) if grad.numel() else 0  # rows that hold a non-zero
    nz = grad != 0
    tolerance = _("used a tolerance: any non-zero value, however small, means the row receives gradient.")
    expect_equal(out, expected, _("rows with non-zero gradient in a {shape} gradient (a Python int)",
                                  shape=list(grad.shape)), mistakes=[
        (_("counted non-zero entries, not rows."), lambda: int(nz.sum())),
        (_("counted rows whose entries are ALL non-zero; a row counts if ANY entry is non-zero."),
         lambda: int(nz.all(dim=1).sum()) if grad.numel() else 0),
        (_("counted COLUMNS that hold a non-zero entry (a reduction over dim 0); the rows are the tokens: reduce "
           "over dim 1, (grad != 0).any(dim=1)."), lambda: int(nz.any(dim=0).sum()) if grad.numel() else 0),
        (_("summed each row: a row like [1, -1] sums to 0 but its gradient is not zero. Test each entry."),
         lambda: int((grad.sum(dim=1) != 0).sum())),
        (_("cast the gradient to float32 (or compared it with a float32 tensor): float64 entries smaller than "
           "float32's tiniest number (1e-45) become 0. Test the gradient in its own dtype: (grad != 0).any(dim=1)."),
         lambda: int((grad.float() != 0).any(dim=1).sum()) if grad.numel() else 0),
        *[(tolerance, lambda t=t: int((grad.abs() > t).any(dim=1).sum()) if grad.numel() else 0)
          for t in (1e-4, 1e-6, 1e-8, 1e-10, 1e-12, 1e-15, 1e-20)],  # whichever threshold was picked
        (_("squared the entries (a row norm or a sum of squares): tiny values underflow, 2e-30 ** 2 is 0 in float32 "
           "(1e-5 ** 2 in float16). Test each entry: (grad != 0).any(dim=1)."),
         lambda: int(((grad ** 2).sum(dim=1) > 0).sum()) if grad.numel() else 0),
    ])


def _rows_inputs(make):
    return lambda: (make(),)
