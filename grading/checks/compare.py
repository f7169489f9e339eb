"""Comparison helpers for checks: each failure says what was expected, what came back, and why."""
from __future__ import annotations

from typing import Any, Iterable

import torch

from ..model import CheckFailed


Mistake = tuple[str, Any]  # (name and explanation, the wrong result that mistake produces)


def _shape(t: torch.Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _fmt(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        if x.numel() <= 8:
            return str([round(v, 6) if isinstance(v, float) else v for v in x.flatten().tolist()])
        return f"tensor of shape {_shape(x)}"
    return repr(x)


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
            return isinstance(got, (int, float)) and abs(got - wrong) <= atol + rtol * abs(wrong)
        return type(got) is type(wrong) and got == wrong
    except Exception:
        return False


def named_mistake(got: Any, mistakes: Iterable[Mistake] | None, atol: float = 1e-5, rtol: float = 1e-4) -> str:
    """The explanation of the first mistake whose wrong result `got` reproduces, else ''."""
    for explanation, wrong in mistakes or ():
        try:
            wrong_value = wrong() if callable(wrong) else wrong
        except Exception:  # a mistake that cannot be reproduced on this input explains nothing
            continue
        if matches(got, wrong_value, atol, rtol):
            return f"\n  Likely mistake: {explanation}"
    return ""


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
    return (f" The values are right; only the dtype differs: return {expected.dtype} (the docstring's dtype, "
            "usually the input's). "
            "A .float(), a torch.zeros/torch.tensor without dtype= (float32 by default) or a float64 computation "
            "that is not cast back changes it.")


def expect_tensor(got: Any, expected: torch.Tensor, what: str = "result", *, atol: float = 1e-5,
                  rtol: float = 1e-4, check_dtype: bool = True, mistakes: Iterable[Mistake] | None = None) -> None:
    """Raise CheckFailed unless `got` is a tensor of the expected shape, dtype and values."""
    mistakes = list(mistakes or ())
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{what}: expected a torch.Tensor, got {type(got).__name__} ({_fmt(got)})."
                          + named_mistake(got, mistakes, atol, rtol))
    if got.shape != expected.shape:
        raise CheckFailed(f"{what}: expected shape {_shape(expected)}, got {_shape(got)}."
                          + named_mistake(got, mistakes, atol, rtol))
    if check_dtype and got.dtype != expected.dtype:
        raise CheckFailed(f"{what}: expected dtype {expected.dtype}, got {got.dtype}." + _dtype_note(got, expected)
                          + named_mistake(got, mistakes, atol, rtol))
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
    max_err = f"{float(diff[finite].max()):.3g}" if bool(finite.any()) else "n/a (no finite pairs)"
    bad = int((~close).sum())
    msg = (f"{what}: {bad} of {expected.numel()} values differ. First at index {list(index)}: "
           f"expected {e[index].item():.6g}, got {g[index].item():.6g}. "
           f"Max abs error over finite values {max_err} (tolerance atol={atol:g}, rtol={rtol:g}).")
    if bool(torch.isnan(g).any()) and not bool(torch.isnan(e).any()):
        msg += " Your result contains NaN."
    raise CheckFailed(msg + named_mistake(got, mistakes, atol, rtol))


def expect_equal(got: Any, expected: Any, what: str = "result", mistakes: Iterable[Mistake] | None = None) -> None:
    """Raise CheckFailed unless `got == expected` with the same type family (exact)."""
    same_kind = (isinstance(expected, bool) and isinstance(got, bool)) or (
        not isinstance(expected, bool) and isinstance(expected, int) and isinstance(got, int) and not isinstance(got, bool)
    ) or (not isinstance(expected, (int, bool)) and type(got) is type(expected))
    if same_kind and got == expected:
        return
    kind = "" if same_kind else f" (expected a {type(expected).__name__}, got a {type(got).__name__})"
    note = ""
    if isinstance(expected, int) and not isinstance(expected, bool) and not same_kind:
        if isinstance(got, float):
            note = (" You returned a float: return an exact Python int (integer arithmetic: * and //, "
                    "not /; or int(...) at the end).")
        elif isinstance(got, torch.Tensor):
            note = " You returned a tensor: return a Python int (wrap the count in int(...), or use .item())."
    raise CheckFailed(f"{what}: expected {_fmt(expected)}, got {_fmt(got)}{kind}.{note}" + named_mistake(got, mistakes))


def _float_note(got: float, expected: float) -> str:
    """Names a result that is the expected number rounded (to a few decimals, or to float32/float16)."""
    if got != got or expected != expected:
        return ""
    for decimals in range(7):
        if got == round(expected, decimals) and got != expected:
            return f" You rounded the result to {decimals} decimals: return it unrounded."
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        if abs(got - expected) <= 2 * torch.finfo(dtype).eps * abs(expected):
            return (f" Your value agrees with the right one only to {dtype} precision (about "
                    f"{torch.finfo(dtype).resolution:g} relative): a torch tensor without dtype=torch.float64 "
                    "computes in float32. Use Python numbers (or float64).")
    return ""


def expect_float(got: Any, expected: float, what: str = "result", *, atol: float = 1e-6, rtol: float = 1e-5,
                 mistakes: Iterable[Mistake] | None = None) -> None:
    """Raise CheckFailed unless `got` is a real number close to `expected`."""
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        raise CheckFailed(f"{what}: expected a number, got {type(got).__name__}." + named_mistake(got, mistakes))
    if not abs(got - expected) <= atol + rtol * abs(expected):  # written so that NaN fails too
        raise CheckFailed(f"{what}: expected {expected:.6g}, got {got:.6g} (error {abs(got - expected):.3g}, "
                          f"tolerance atol={atol:g}, rtol={rtol:g})." + _float_note(got, expected)
                          + named_mistake(got, mistakes, atol, rtol))


def expect_that(condition: bool, message: str) -> None:
    """Raise CheckFailed(message) unless `condition`."""
    if not condition:
        raise CheckFailed(message)


def seeded(seed: int) -> torch.Generator:
    """A CPU generator with a fixed seed, for deterministic case inputs."""
    return torch.Generator().manual_seed(seed)




def expect_tuple(got: Any, n: int, what: str = "result") -> tuple:
    """Raise CheckFailed unless `got` is a tuple (or list) of n items; return it as a tuple."""
    if not isinstance(got, (tuple, list)) or len(got) != n:
        kind = f"a {type(got).__name__}" + (f" of {len(got)} items" if isinstance(got, (tuple, list)) else "")
        raise CheckFailed(f"{what}: expected a tuple of {n} items, got {kind}.")
    return tuple(got)
