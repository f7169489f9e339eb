"""Comparison helpers for checks: each failure says what was expected, what came back, and why."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import torch

from ..i18n import N_, _, verbatim
from ..model import CheckFailed


RESULT = _("result")  # what a check calls the learner's result unless it names it
Mistake = tuple[str, Any]  # (name and explanation, the wrong result that mistake produces)


def _shape(t: torch.Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _fmt(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        if x.numel() <= 8:
            return str([round(v, 6) if isinstance(v, float) else v for v in x.flatten().tolist()])
        return _("tensor of shape {shape}", shape=_shape(x))
    return verbatim(repr(x))


def matches(got: Any, wrong: Any, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    """True if `got` equals `wrong` (tensors within tolerance, other values by ==)."""
    try:
        if isinstance(wrong, torch.Tensor):
            return (isinstance(got, torch.Tensor) and got.shape == wrong.shape
                    and torch.allclose(got.double(), wrong.double(), atol=atol, rtol=rtol, equal_nan=True))
        if isinstance(wrong, (tuple, list)):
            return (isinstance(got, (tuple, list)) and len(got) == len(wrong)
                    and all(matches(g, w, atol, rtol) for g, w in zip(got, wrong)))
        if isinstance(wrong, float):
            return isinstance(got, (int, float)) and (abs(got - wrong) <= atol + rtol * abs(wrong)
                                                       or (math.isnan(got) and math.isnan(wrong)))  # as tensors do
        return type(got) is type(wrong) and got == wrong
    except Exception:
        return False


POSSIBLE_MSG = N_("Possible causes (this input alone cannot tell them apart; the other cases may):")
POSSIBLE_MARK = "Possible causes"  # several known mistakes give this very result: none is named


@dataclass(frozen=True)
class Diagnosis:
    """What the known mistakes say about a wrong result: the one `mistake` that alone reproduces it (a field of the
    CheckFailed, never words in its message), or the `causes` this input cannot tell apart (words in the message)."""

    mistake: str = ""
    causes: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """What goes into the message: the possible causes, listed ('' when one mistake is named, or none)."""
        if not self.causes:
            return ""
        return "\n  " + _(POSSIBLE_MSG) + "".join("\n  - " + _("one possible cause: {cause}", cause=f)
                                                   for f in self.causes)

    def __bool__(self) -> bool:
        return bool(self.mistake or self.causes)

    def fail(self, message: str) -> CheckFailed:
        """The CheckFailed for `message`, with this diagnosis: the causes appended, the mistake as its field."""
        return CheckFailed(message + self.text, self.mistake)


def named_mistake(got: Any, mistakes: Iterable[Mistake] | None, atol: float = 1e-5, rtol: float = 1e-4,
                  expected: Any = None) -> Diagnosis:
    """The one mistake whose wrong result `got` reproduces, or the candidates this input cannot tell apart.

    A mistake is named only when the evidence singles it out: a candidate whose wrong result equals `expected` on
    this input explains nothing and is skipped, and when several candidates give `got`, none is named: they are
    listed as possible causes.
    """
    found: list[str] = []
    for explanation, wrong in mistakes or ():
        try:
            wrong_value = wrong() if callable(wrong) else wrong
        except Exception:  # a mistake that cannot be reproduced on this input explains nothing
            continue
        if expected is not None and matches(expected, wrong_value, atol, rtol):
            continue  # on this input the mistake gives the right answer
        if matches(got, wrong_value, atol, rtol) and explanation not in found:
            found.append(explanation)
    nothing_finite = isinstance(got, torch.Tensor) and got.numel() > 0 and got.is_floating_point() \
        and not bool(torch.isfinite(got).any())  # NaN/inf everywhere: many mistakes end there
    if len(found) == 1 and not nothing_finite:
        return Diagnosis(mistake=found[0])
    return Diagnosis(causes=tuple(found))


def _dtype_note(got: torch.Tensor, expected: torch.Tensor) -> str:
    """' The values are right; only the dtype differs ...' when `got` holds the expected values to the
    precision of the lower of the two dtypes (so a .float() or a default-dtype tensor is named), else ''."""
    try:
        low = got.dtype if torch.finfo(got.dtype).eps > torch.finfo(expected.dtype).eps else expected.dtype
        tol = 4 * torch.finfo(low).eps
    except TypeError:  # an integer dtype on either side
        tol = 0.0
    try:
        g, e = got.detach().double(), expected.detach().double()
        if not torch.allclose(g, e, rtol=tol, atol=tol, equal_nan=True):
            return ""
    except RuntimeError:
        return ""
    return _(" The values are right; only the dtype differs: return {dtype} (the docstring's dtype, usually the "
                   "input's). A .float(), a torch.zeros/torch.tensor without dtype= (float32 by default) or a float64 "
                   "computation that is not cast back changes it.", dtype=str(expected.dtype))


def _digits(a: float, b: float) -> tuple[str, str]:
    """a and b printed with enough significant digits to show that they differ (6 to 17)."""
    for n in range(6, 18):
        sa, sb = f"{a:.{n}g}", f"{b:.{n}g}"
        if sa != sb or n == 17:
            return sa, sb
    return repr(a), repr(b)


def _precision_note(expected: torch.Tensor, g: torch.Tensor, e: torch.Tensor) -> str:
    """' ... precision difference, not logic ...' when a float64 result agrees with the expected one only to
    float32 precision (a few units in float32's last place, relative to the values' size), else ''."""
    if expected.dtype != torch.float64 or e.numel() == 0 or not bool((torch.isfinite(e) & torch.isfinite(g)).all()):
        return ""
    eps = torch.finfo(torch.float32).eps
    if float((g - e).abs().max()) > 16 * eps * (float(e.abs().max()) or 1.0):
        return ""
    return _(" Your values agree with the right ones only to float32 precision (about {eps:.1g} relative): "
                   "somewhere the computation went through float32 (a .float(), a tensor made without dtype=, an "
                   "accumulator of the wrong dtype). This is a precision difference, not logic: keep every step in "
                   "float64.", eps=eps)


def expect_tensor(got: Any, expected: torch.Tensor, what: str = RESULT, *, atol: float = 1e-5,
                  rtol: float = 1e-4, check_dtype: bool = True, mistakes: Iterable[Mistake] | None = None) -> None:
    """Raise CheckFailed unless `got` is a tensor of the expected shape, dtype and values (`mistakes` is read only
    on a failure, once)."""
    if not isinstance(got, torch.Tensor):
        raise named_mistake(got, mistakes, atol, rtol, expected).fail(_(
            "{what}: expected a torch.Tensor, got {type} ({value}).", what=what, type=type(got).__name__,
            value=_fmt(got)))
    if got.shape != expected.shape:
        raise named_mistake(got, mistakes, atol, rtol, expected).fail(_(
            "{what}: expected shape {expected}, got {got}.", what=what, expected=_shape(expected), got=_shape(got)))
    if check_dtype and got.dtype != expected.dtype:
        note = _dtype_note(got, expected)  # values right: only the dtype is wrong, so no value mistake is named
        msg = _("{what}: expected dtype {expected}, got {got}.", what=what, expected=str(expected.dtype),
                got=str(got.dtype)) + note
        raise CheckFailed(msg) if note else named_mistake(got, mistakes, atol, rtol, expected).fail(msg)
    if expected.numel() == 0:
        return
    g, e = got.detach().double(), expected.detach().double()
    close = torch.isclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
    if bool(close.all()):
        return
    flat = int((~close).flatten().nonzero()[0])
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), expected.shape)) if expected.dim() else ()
    finite = torch.isfinite(g) & torch.isfinite(e)
    diff = (g - e).abs()
    max_err = f"{float(diff[finite].max()):.3g}" if bool(finite.any()) else _("n/a (no finite pairs)")
    bad = int((~close).sum())
    shown_e, shown_g = _digits(e[index].item(), g[index].item())
    msg = _("{what}: {bad} of {n} values differ. First at index {index}: expected {expected}, got {got}. Max abs "
            "error over finite values {max_err} (tolerance atol={atol:g}, rtol={rtol:g}).", what=what, bad=bad,
            n=expected.numel(), index=str(list(index)), expected=shown_e, got=shown_g, max_err=max_err, atol=atol,
            rtol=rtol)
    if bool(torch.isnan(g).any()) and not bool(torch.isnan(e).any()):
        msg += _(" Your result contains NaN.")
    diagnosis = named_mistake(got, mistakes, atol, rtol, expected)
    precision = "" if diagnosis.mistake else _precision_note(expected, g, e)  # a reproduced mistake comes first
    raise CheckFailed(msg + precision) if precision else diagnosis.fail(msg)


def expect_equal(got: Any, expected: Any, what: str = RESULT, mistakes: Iterable[Mistake] | None = None) -> None:
    """Raise CheckFailed unless `got == expected` with the same type family (exact)."""
    same_kind = (isinstance(expected, bool) and isinstance(got, bool)) or (
        not isinstance(expected, bool) and isinstance(expected, int) and isinstance(got, int) and not isinstance(got, bool)
    ) or (not isinstance(expected, (int, bool)) and type(got) is type(expected))
    if same_kind and got == expected:
        return
    kind = "" if same_kind else _(" (expected a {expected}, got a {got})", expected=type(expected).__name__,
                                         got=type(got).__name__)
    note = ""
    if isinstance(expected, int) and not isinstance(expected, bool) and not same_kind:
        if isinstance(got, float):
            note = _(" You returned a float: return an exact Python int (integer arithmetic: * and //, not /; "
                           "or int(...) at the end).")
        elif isinstance(got, torch.Tensor):
            note = _(" You returned a tensor: return a Python int (wrap the count in int(...), or use .item()).")
    if (same_kind and isinstance(expected, int) and not isinstance(expected, bool) and abs(expected) > 2 ** 53
            and abs(got - expected) <= 4 * math.ulp(float(expected))):
        note = _(" Your result is the exact one rounded to a float's 53 bits: the arithmetic went through a "
                       "float somewhere (/, * 1.0, math.ceil of a fraction, a float literal). Keep it in integers "
                       "(*, //, divmod).")
    raise named_mistake(got, mistakes, expected=expected).fail(_(
        "{what}: expected {expected}, got {got}{kind}.", what=what, expected=_fmt(expected), got=_fmt(got),
        kind=kind) + note)


def _float_note(got: float, expected: float) -> str:
    """Names a result that is the expected number rounded (to a few decimals, or to float32/float16)."""
    if got != got or expected != expected:
        return ""
    for decimals in range(7) if got != 0 else ():  # a zero has too many other causes to be called a rounding
        if got == round(expected, decimals) and got != expected:
            return _(" You rounded the result to {decimals} decimals: return it unrounded.", decimals=decimals)
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        if abs(got - expected) <= 2 * torch.finfo(dtype).eps * abs(expected):
            return _(" Your value agrees with the right one only to {dtype} precision (about {resolution:g} "
                           "relative): a torch tensor without dtype=torch.float64 computes in float32. Use Python "
                           "numbers (or float64).", dtype=str(dtype), resolution=torch.finfo(dtype).resolution)
    return ""


def expect_float(got: Any, expected: float, what: str = RESULT, *, atol: float = 1e-6, rtol: float = 1e-5,
                 mistakes: Iterable[Mistake] | None = None, python: bool = False) -> None:
    """Raise CheckFailed unless `got` is a real number close to `expected` (a Python float or int if `python`,
    as a docstring that promises "a Python float" requires; else a one-element tensor is accepted too)."""
    if python and isinstance(got, torch.Tensor):
        raise CheckFailed(_("{what}: expected a Python float, got a {dim}-d torch.Tensor of {dtype}. The docstring "
                            "promises a Python float: return float(x) (or x.item()), not the tensor.", what=what,
                            dim=got.dim(), dtype=str(got.dtype)))
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        raise named_mistake(got, mistakes).fail(_("{what}: expected a number, got {type}.", what=what,
                                                  type=type(got).__name__))
    if not abs(got - expected) <= atol + rtol * abs(expected):  # written so that NaN fails too
        raise named_mistake(got, mistakes, atol, rtol, expected).fail(_(
            "{what}: expected {expected:.6g}, got {got:.6g} (error {error:.3g}, tolerance atol={atol:g}, "
            "rtol={rtol:g}).", what=what, expected=expected, got=got, error=abs(got - expected), atol=atol,
            rtol=rtol) + _float_note(got, expected))


def expect_that(condition: bool, message: str) -> None:
    """Raise CheckFailed(message) unless `condition`."""
    if not condition:
        raise CheckFailed(message)


def seeded(seed: int) -> torch.Generator:
    """A CPU generator with a fixed seed, for deterministic case inputs."""
    return torch.Generator().manual_seed(seed)




def expect_tuple(got: Any, n: int, what: str = RESULT) -> tuple:
    """Raise CheckFailed unless `got` is a tuple (or list) of n items; return it as a tuple."""
    if not isinstance(got, (tuple, list)) or len(got) != n:
        if isinstance(got, (tuple, list)):
            raise CheckFailed(_("{what}: expected a tuple of {n} items, got a {type} of {m} items.", what=what, n=n,
                                type=type(got).__name__, m=len(got)))
        raise CheckFailed(_("{what}: expected a tuple of {n} items, got a {type}.", what=what, n=n,
                            type=type(got).__name__))
    return tuple(got)
