"""Differential checks on generated inputs: the learner's function against the reference on many small inputs.

    generated(name, examples, check, reference)   # one Case: every example in one call, the smallest failure shown

Design (the sandbox makes each call to learner code a round trip, so nothing is re-run to shrink):
- the examples are drawn judge-side by Hypothesis from a fixed seed (`derandomize=True`, no example database, a
  bounded `max_examples`), joined with the edge cases a chapter lists by hand, and ordered from small to large;
- the whole list travels as one case, and the worker's "each" call (grading/worker/calls/base.py) runs the
  learner's function on every example, reporting per example its result or error, the inputs it changed in
  place and whether the result shares memory with an input;
- the check runs the chapter's own check on each example and shows the SMALLEST failing one: the input, the
  learner's result and the expected one, then that check's message. A mistake is named only when every failing
  example that names one names the same one and no failing example is left unexplained.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from ..i18n import _, strip_marks, verbatim
from ..model import Case, CheckFailed
from .unchanged import IN_PLACE

Example = tuple  # the arguments of one call of the learner's function
Check = Callable[[Any, tuple], None]

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
KINDS = ("normal", "ties", "uniform", "neg_inf", "row_scales")
LAYOUTS = ("contiguous", "transposed", "sliced", "expanded")
SCALES = (1e-3, 1.0, 30.0, 1e3)

ALIAS = _("you returned the input tensor itself (or a view of it): the caller's logits and your result are one "
          "tensor, so changing one changes the other. Return a new tensor (masked_fill, torch.where, x / t and "
          "x.clone() all make one).")
SQUEEZED = _("your result lost its size-one dimensions (a .squeeze(), or an index like [0] or [..., 0]): a [1, V] "
             "input must give a [1, V] result. Keep every dimension (keepdim=True in reductions, squeeze(dim) only "
             "where you mean it).")
FLOAT32 = _("your result is float32 when the input is float64: somewhere the computation went through float32 "
            "(a .float(), a tensor made without dtype=) and was not cast back. Keep the input's dtype.")


# ---------------------------------------------------------------- generation


@dataclass(frozen=True)
class Recipe:
    """How to build one logits tensor: drawn by Hypothesis, built with a seeded torch generator."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32
    kind: str = "normal"
    scale: float = 1.0
    layout: str = "contiguous"
    seed: int = 0

    def build(self, finite_dim: int = -1) -> torch.Tensor:
        """The tensor (a non-contiguous view for the layouts that make one); with kind neg_inf, every slice along
        `finite_dim` keeps at least one finite entry."""
        g = torch.Generator().manual_seed(self.seed)
        shape, layout = list(self.shape), self.layout
        if len(shape) < 2 and layout in ("transposed", "expanded"):
            layout = "contiguous"
        if layout == "transposed":
            shape[-1], shape[-2] = shape[-2], shape[-1]
        elif layout == "sliced":
            shape[-1] *= 2
        elif layout == "expanded":
            shape[0] = 1
        d = finite_dim % len(shape) if shape else 0
        if layout == "transposed" and d >= len(shape) - 2:
            d = 2 * len(shape) - 3 - d  # the last two dims are swapped in the tensor the view is made of
        x = values(tuple(shape), self.kind, self.scale, g, self.dtype, d)
        if layout == "transposed":
            return x.transpose(-1, -2)
        if layout == "sliced":
            return x[..., ::2]
        if layout == "expanded":
            return x.expand(*self.shape)
        return x


def values(shape: tuple[int, ...], kind: str, scale: float, g: torch.Generator, dtype: torch.dtype,
           finite_dim: int = -1) -> torch.Tensor:
    """Seeded values of one `kind` (KINDS), computed in float64 and cast to `dtype` (clamped to its range)."""
    if kind == "ties":
        x = torch.randint(0, 3, shape, generator=g).double()
    elif kind == "uniform":
        x = torch.full(shape, float(torch.randn((), generator=g, dtype=torch.float64)) * scale, dtype=torch.float64)
    else:
        x = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    if kind == "row_scales" and x.dim() >= 1:  # rows of very different scales: 1, 1e3, 1e6, ...
        rows = torch.arange(math.prod(shape[:-1]) if len(shape) > 1 else 1, dtype=torch.float64)
        x = (x.reshape(-1, shape[-1]) * 10.0 ** (3 * (rows % 3))[:, None]).reshape(shape)
    if dtype in (torch.float16, torch.bfloat16):
        limit = torch.finfo(dtype).max / 4
        x = x.clamp(-limit, limit)
    if kind == "neg_inf" and x.numel():
        r = torch.rand(shape, generator=g, dtype=torch.float64)
        keep = r == r.amax(finite_dim, keepdim=True)  # one finite entry in every slice along finite_dim
        x = x.masked_fill((r < 0.5) & ~keep, float("-inf"))
    return x.to(dtype)


def ids_tensor(shape: tuple[int, ...], high: int, layout: str = "contiguous", seed: int = 0) -> torch.Tensor:
    """Seeded int64 ids in [0, high) of `shape` (0-d too), as a `layout` view (LAYOUTS) where the shape allows one."""
    g = torch.Generator().manual_seed(seed)
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        return torch.randint(0, high, shape[:-2] + (shape[-1], shape[-2]), generator=g).transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        return torch.randint(0, high, shape[:-1] + (2 * shape[-1],), generator=g)[..., ::2]
    if layout == "expanded" and len(shape) >= 2:
        return torch.randint(0, high, (1,) + shape[1:], generator=g).expand(*shape)
    return torch.randint(0, high, shape, generator=g)


def draw(strategy, n: int) -> list:
    """n values of a Hypothesis strategy, the same on every run and OS: derandomized, no database, generation only
    (nothing is shrunk: the examples are ordered by size instead). Hypothesis also mixes in constants it reads
    from the source of the process's own modules (and caches them under .hypothesis/): that would make the examples
    depend on what the process imported (a notebook is not the command line) and write into the user's folder, so
    that pool is left empty here."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.internal.conjecture import providers

    found: list = []
    empty = providers.Constants() if hasattr(providers, "Constants") else None
    local, providers._get_local_constants = providers._get_local_constants, lambda: empty

    @settings(derandomize=True, database=None, max_examples=n, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        found.append(example)

    try:
        collect()
    finally:
        providers._get_local_constants = local
    return found


def recipes(n: int, dtypes: Sequence[torch.dtype] = FLOAT_DTYPES, min_v: int = 1, max_v: int = 12) -> list[Recipe]:
    """n tensor recipes: shapes [V], [B, V] or [A, B, V] (batch sizes 0 to 3, V from `min_v`), every dtype of
    `dtypes`, every kind, scale and layout."""
    from hypothesis import strategies as st

    shape = st.tuples(st.lists(st.integers(0, 3), max_size=2), st.integers(min_v, max_v))
    strategy = st.builds(lambda s, d, k, sc, lay, seed: Recipe(tuple(s[0]) + (s[1],), d, k, sc, lay, seed),
                         shape, st.sampled_from(list(dtypes)), st.sampled_from(KINDS), st.sampled_from(SCALES),
                         st.sampled_from(LAYOUTS), st.integers(0, 2 ** 16))
    return draw(strategy, n)


def size(example: Example) -> tuple:
    """Sort key, small first: elements, then dimensions, then the dtype's width (a float32 failure is shown before
    the same one in float64), then the integer arguments' size; inputs with no elements last (an empty result shows
    nothing)."""
    tensors = [a for a in example if isinstance(a, torch.Tensor)]
    n = sum(t.numel() for t in tensors)
    ints = sum(abs(a) for a in example if isinstance(a, int) and not isinstance(a, bool))  # then smaller numbers
    return (n == 0 and bool(tensors), n, sum(t.dim() for t in tensors), sum(t.element_size() for t in tensors), ints)


def ordered(examples: Sequence[Example]) -> list[Example]:
    """The examples from small to large (a stable sort: equal sizes keep their order)."""
    return sorted(examples, key=size)


# ---------------------------------------------------------------- showing an example


def show(value: Any, digits: int = 4) -> str:
    """A short, readable text of an argument or a result: a small tensor's values, else its shape (verbatim); a tuple
    or list holding tensors (a (values, ids) result) item by item."""
    if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
        items = ", ".join(strip_marks(show(v, digits)) for v in value)
        return verbatim(f"({items})" if isinstance(value, tuple) else f"[{items}]")
    if isinstance(value, torch.Tensor):
        layout = "" if value.is_contiguous() else f", strides {tuple(value.stride())}"
        head = f"{str(value.dtype).replace('torch.', '')}, shape {list(value.shape)}{layout}"
        if value.numel() <= 12 and value.is_floating_point():
            flat = [_num(v, digits) for v in value.detach().double().reshape(-1).tolist()]
            rows = [flat[i:i + value.shape[-1]] for i in range(0, len(flat), value.shape[-1] or 1)] \
                if value.dim() > 1 else flat
            return verbatim(f"{_nested(rows)} ({head})")
        if value.numel() <= 12:
            return verbatim(f"{value.tolist()} ({head})")
        return verbatim(f"({head})")
    return verbatim(repr(value))


def show_pair(got: Any, expected: Any) -> tuple[str, str]:
    """`got` and `expected` shown with just enough digits (4 to 17) for their texts to differ where they do."""
    for digits in range(4, 18):
        a, b = show(got, digits), show(expected, digits)
        if a != b:
            return a, b
    return show(got), show(expected)


def _num(v: float, digits: int = 4) -> str:
    return "-inf" if v == float("-inf") else "inf" if v == float("inf") else "nan" if v != v else f"{v:.{digits}g}"


def _nested(vals: list) -> str:
    return "[" + ", ".join(_nested(v) if isinstance(v, list) else v for v in vals) + "]"


# ---------------------------------------------------------------- the case and its check


@dataclass
class Failure:
    index: int
    message: str
    mistake: str = ""


def _squeezed(out: Any, args: Example, reference: Callable[[Example], Any] | None) -> bool:
    """Whether `out` has the reference result's shape with its size-one dimensions removed."""
    if reference is None or not isinstance(out, torch.Tensor):
        return False
    try:
        shape = tuple(reference(args).shape)
    except Exception:
        return False
    return tuple(out.shape) != shape and tuple(out.shape) == tuple(s for s in shape if s != 1)


def _failure(i: int, args: Example, report: Any, check: Check,
             reference: Callable[[Example], Any] | None = None) -> Failure | None:
    if not isinstance(report, dict):
        raise RuntimeError("internal: the 'each' call sent back something else than one report per example")
    if "error" in report:
        return Failure(i, _("your function raised {error}", error=verbatim(report["error"])))
    if report.get("changed"):
        return Failure(i, _("your function changed its input in place (argument {n}): leave the caller's tensors as "
                            "they were and return a new one.", n=verbatim(", ".join(report["changed"]))), IN_PLACE)
    out = report.get("out")
    try:
        check(out, args)
    except CheckFailed as e:
        x = args[0] if args and isinstance(args[0], torch.Tensor) else None
        first = next((o for o in out if isinstance(o, torch.Tensor)), None) if isinstance(out, tuple) else out
        if (x is not None and isinstance(first, torch.Tensor) and x.dtype == torch.float64
                and first.dtype == torch.float32):
            return Failure(i, e.message, FLOAT32)
        if _squeezed(out, args, reference):
            return Failure(i, e.message, SQUEEZED)
        return Failure(i, e.message, e.mistake)
    if report.get("alias"):
        return Failure(i, _("your result is the input tensor itself (it shares the input's memory)."), ALIAS)
    return None


def check_examples(reports: Any, examples: Sequence[Example], check: Check,
                   reference: Callable[[Example], Any] | None = None, names: Sequence[str] = ()) -> None:
    """Raise CheckFailed for the smallest example whose report fails `check` (or raised, changed an input, or
    returned the input itself); the message shows that input, the learner's result and the reference's."""
    if not isinstance(reports, list) or len(reports) != len(examples):
        raise RuntimeError("internal: the 'each' call sent back no list of one report per example")
    failures = [f for i, (args, rep) in enumerate(zip(examples, reports))
                if (f := _failure(i, args, rep, check, reference))]
    if not failures:
        return
    first = failures[0]
    args, report = examples[first.index], reports[first.index]
    shown = "\n    ".join((f"{names[i]} = " if i < len(names) else "") + show(a) for i, a in enumerate(args))
    msg = _("{bad} of {n} generated inputs fail; the smallest:\n    {args}", bad=len(failures), n=len(examples),
            args=verbatim(shown))
    try:
        expected = reference(args) if reference is not None else None
    except Exception:  # the reference is shown when it can be computed; the check below still decides
        expected = None
    got = report.get("out")
    got_text, expected_text = show_pair(got, expected) if expected is not None else (show(got), "")
    if "out" in report:
        msg += "\n  " + _("your result: {got}", got=got_text)
    if expected is not None:
        msg += "\n  " + _("expected:    {expected}", expected=expected_text)
    named = {f.mistake for f in failures}
    mistake = first.mistake if len(named) == 1 else ""  # one mistake explains every failing example, or none is named
    raise CheckFailed(msg + "\n  " + first.message, mistake)


GENERATED_TITLE = _("generated inputs (shapes, dtypes, views, boundaries) against a reference, smallest failure shown")


def with_generated(chapter, table: dict, title: str = GENERATED_TITLE):
    """Give each exercise named in `table` ({exercise: (its examples, its check, its reference)}) one more case:
    its generated inputs, checked in one call ("each"), the arguments shown with the hand-out's parameter names."""
    from .unchanged import argument_names

    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.name in table:
            ex.cases.append(generated(title, *table[ex.name], names=names.get(ex.name, [])))
    return chapter


def generated(name: str, examples: Callable[[], list[Example]], check: Check,
              reference: Callable[[Example], Any] | None = None, names: Sequence[str] = ()) -> Case:
    """One Case that runs the learner's function on every example (built judge-side, ordered small to large) in one
    call ("each") and fails with the smallest failing one, its arguments shown with their `names`."""
    return Case(name, lambda: (examples(),),
                lambda out, inputs: check_examples(out, inputs[0], check, reference, names), "each")
