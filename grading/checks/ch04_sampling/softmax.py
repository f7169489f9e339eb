"""Chapter 04: softmax and apply_temperature (and the ValueError a temperature of 0 or less must raise)."""
from __future__ import annotations

import torch

from ...i18n import _, verbatim
from ..compare import CheckFailed, expect_tensor
from ..fixtures import random_tensor
from .common import FIVE, _real, _softmax64, _with_neg_inf


# ---------------------------------------------------------------- softmax


SOFTMAX_INPUTS = {
    _("the chapter's five logits [2.3, 1.5, 3.8, 0.5, 1.2]"): lambda: (torch.tensor(FIVE), -1),
    _("the four-word toy: logits [2, 1, 1, 0]"): lambda: (torch.tensor([2.0, 1.0, 1.0, 0.0]), -1),
    _("a batch [4, 10], dim=-1"): lambda: (random_tensor((4, 10), 1, 3.0), -1),
    _("dim=0 of a [6, 3] tensor"): lambda: (random_tensor((6, 3), 2), 0),
    _("3-D [2, 3, 5], dim=1"): lambda: (random_tensor((2, 3, 5), 3), 1),
    _("huge logits [1000, 999, 990, 0] (exp(1000) overflows)"): lambda: (torch.tensor([[1000.0, 999.0, 990.0, 0.0]]), -1),
    _("very negative logits [-1000, -1001, -1010] (exp underflows to 0)"): lambda: (torch.tensor([-1000.0, -1001.0, -1010.0]), -1),
    _("rows on very different scales [[1000, 999], [0, -1]]"): lambda: (torch.tensor([[1000.0, 999.0], [0.0, -1.0]]), -1),
    _("-inf entries (masked tokens get probability 0)"): lambda: (_with_neg_inf(random_tensor((3, 8), 4), 5), -1),
    _("float64 keeps float64"): lambda: (random_tensor((2, 7), 6, dtype=torch.float64), -1),
    _("float16 [4, 64] (scale 4): accumulated in float32, returned as float16"): lambda: (
        random_tensor((4, 64), 70, 4.0, torch.float16), -1),
    _("bfloat16 [3, 200] (scale 4), dim=-1"): lambda: (random_tensor((3, 200), 71, 4.0, torch.bfloat16), -1),
    _("bfloat16 [6, 5], dim=0"): lambda: (random_tensor((6, 5), 72, 3.0, torch.bfloat16), 0),
    _("a zero-size dimension [2, 0] -> an empty [2, 0], like torch.softmax"): lambda: (torch.zeros(2, 0), -1),
    _("an empty vector [0]"): lambda: (torch.zeros(0), -1),
    _("[0, 3] along dim=0 (zero-size)"): lambda: (torch.zeros(0, 3), 0),
    _("the course model's next-token logits [49152]"): lambda: (_real(), -1),
}

# float16/bfloat16: torch.softmax accumulates in float32, so its result is the exact one rounded to the dtype;
# one unit in the last place (relative 2**-10 and 2**-7; float16 subnormals below 2**-14 step by 2**-24) is allowed.
HALF_TOLERANCE = {torch.float16: dict(atol=2.0 ** -24, rtol=2.0 ** -10), torch.bfloat16: dict(atol=0.0, rtol=2.0 ** -7)}


EPSILON = _("you added a small epsilon (to the sum, or to exp): the reference adds none, and in float64 it shows. "
            "After the max shift the largest term is exp(0) = 1, so the sum is at least 1: nothing to guard against.")


def _check_softmax(out, inputs):
    x, dim = inputs
    expected = _softmax64(x, dim).to(x.dtype)
    tol = (dict(atol=1e-12, rtol=1e-9) if x.dtype == torch.float64 else HALF_TOLERANCE.get(x.dtype)
           or dict(atol=1e-7, rtol=1e-4))

    def naive():
        e = x.exp()
        return e / e.sum(dim=dim, keepdim=True)

    def naive_half():
        e = (x - x.amax(dim=dim, keepdim=True)).exp()
        return e / e.sum(dim=dim, keepdim=True)

    def global_shift():
        e = (x - x.max()).exp()
        return e / e.sum(dim=dim, keepdim=True)

    mistakes = [
        (_("softmax without the max shift: exp of a large logit overflows to inf (or every exp underflows to 0), "
           "and inf/inf or 0/0 is NaN. Subtract the max along `dim` first; it does not change the result."), naive),
        (_("you subtracted the max of the whole tensor, not the max along `dim`: a row far below the global max "
           "underflows to 0/0. Use amax(dim=dim, keepdim=True)."), global_shift),
        (_("you normalised over the whole tensor instead of along `dim` (sum(dim=dim, keepdim=True))."),
         lambda: (x - x.max()).exp() / (x - x.max()).exp().sum()),
    ]
    if x.dtype == torch.float64:  # float32's rounding hides an epsilon; float64's does not
        def plus_eps(eps, where):
            e = (x - x.amax(dim=dim, keepdim=True)).exp()
            return e / (e.sum(dim=dim, keepdim=True) + eps) if where == "sum" else (e + eps) / (e + eps).sum(
                dim=dim, keepdim=True)

        mistakes += [(EPSILON, lambda eps=eps, where=where: plus_eps(eps, where))
                     for eps in (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5) for where in ("sum", "exp")]
    if x.dim() > 1:
        other = 0 if dim in (-1, x.dim() - 1) else -1
        mistakes.append((_("you normalised along dim={other} instead of dim={dim}.", other=other, dim=dim),
                         lambda: _softmax64(x, other).to(x.dtype)))
    if x.dtype in HALF_TOLERANCE:
        mistakes.insert(0, (_("you computed in {dtype} itself: the shift, exp and division each round to "
                              "{dtype}, several units in the last place off. Accumulate in float32 as torch.softmax "
                              "does (x.float()), then cast the result back with .to(logits.dtype).", dtype=str(x.dtype)),
                            naive_half))
    expect_tensor(out, expected, "softmax", **tol, mistakes=mistakes)


# ---------------------------------------------------------------- temperature


TEMPERATURE_INPUTS = {
    _("the five logits at T = 0.5 (sharper)"): lambda: (torch.tensor(FIVE), 0.5),
    _("the five logits at T = 1.5 (flatter)"): lambda: (torch.tensor(FIVE), 1.5),
    _("T = 1 changes nothing"): lambda: (torch.tensor(FIVE), 1.0),
    _("a batch [3, 20] at T = 0.7"): lambda: (random_tensor((3, 20), 7, 2.0), 0.7),
    _("-inf entries stay -inf, T = 2"): lambda: (_with_neg_inf(random_tensor((2, 9), 8), 9), 2.0),
    _("an integer temperature 3"): lambda: (random_tensor((4,), 10), 3),
    _("huge logits at T = 0.01"): lambda: (torch.tensor([1e4, -1e4, 0.0]), 0.01),
    _("float64 keeps float64"): lambda: (random_tensor((2, 5), 11, dtype=torch.float64), 0.8),
}


def _check_temperature(out, inputs):
    from transformers.generation.logits_process import TemperatureLogitsWarper

    x, t = inputs
    expected = TemperatureLogitsWarper(float(t))(None, x)
    tol = HALF_TOLERANCE.get(x.dtype, dict(atol=0, rtol=1e-6))  # half precision: x * (1 / T) may round one unit off
    expect_tensor(out, expected, _("logits at temperature {t}", t=t), **tol, mistakes=[
        (_("you multiplied by the temperature; divide the logits by it (T < 1 must sharpen)."), lambda: x * t),
        (_("you applied the temperature after softmax and returned probabilities / T. Temperature divides the "
           "logits BEFORE softmax; dividing probabilities by T changes nothing once they are renormalised."),
         lambda: _softmax64(x).to(x.dtype) / t),
        (_("you returned probabilities softmax(logits / T); this function returns the scaled logits."),
         lambda: _softmax64(x / t).to(x.dtype)),
    ])


def _check_raises(out, inputs):
    if not isinstance(out, dict) or not isinstance(out.get("raised"), bool):
        raise RuntimeError("internal: the call did not report whether a ValueError was raised.")
    if out["raised"]:
        return
    got = _returned(out.get("returned", ""))
    t = inputs[1]
    if t != t:
        raise CheckFailed(_("temperature NaN: expected a ValueError, got {got}. NaN compares False with everything, "
                            "so `if temperature <= 0: raise` lets it through and every logit becomes NaN. Test the "
                            "condition you want to hold: `if not temperature > 0: raise ValueError(...)`.", got=got))
    raise CheckFailed(_("temperature {t}: expected a ValueError, got {got}. A temperature must be > 0 "
                        "(temperature 0 means greedy, which is handled before any division).", t=t, got=got))


def _returned(got: str) -> str:
    """The learner-side description of what came back (grading/worker/calls/ch04.py `raises`), marked: its own
    words translated, a repr shown as is."""
    if got == "a tensor":
        return _("a tensor")
    if got == "a tensor containing inf/NaN":
        return _("a tensor containing inf/NaN")
    return verbatim(got)
