"""Chapter 03 on generated inputs: count_parameters, embedding_share, untied_total and rows_with_gradient against
independent references (Parameters deduplicated by identity, exact integer arithmetic, a row-by-row Python scan).

count_parameters: small models built from a seed: layers reused, Parameters registered under two names, frozen
ones, buffers, half precision, the meta device. rows_with_gradient: [V, d] gradients of every float dtype and layout
with zero rows, -0.0, and each dtype's smallest non-zero number. embedding_share and untied_total: tied totals up
to 2**62 (a float cannot hold every one).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import torch
from torch import nn

from ..properties import FLOAT_DTYPES, LAYOUTS, Example, Recipe, draw, ordered
from ...i18n import N_
from .counting import _check_count, _check_share, _check_untied
from .gradients import _check_rows
from .tying import _built

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
GENERATED_MODEL = N_("a generated model")  # how the share and untied checks name an input that is no real model


def _model(seed: int) -> nn.Module:
    """A small model from `seed`: 1 to 4 layers, some reused or tied, frozen, with buffers, half precision or meta."""
    g = torch.Generator().manual_seed(seed)

    def pick(n: int) -> int:
        return int(torch.randint(0, n, (), generator=g))

    dtype = (torch.float32, torch.float16, torch.bfloat16, torch.float64)[pick(4)]
    device = "meta" if pick(4) == 0 else "cpu"
    layers: list[nn.Module] = []
    for _i in range(1 + pick(4)):
        kind, a, b = pick(5), 1 + pick(6), 1 + pick(6)
        if kind == 0 and layers:
            layers.append(layers[pick(len(layers))])  # the same module twice: its Parameters once
        elif kind == 1:
            layers.append(nn.Embedding(a, b, dtype=dtype, device=device))
        elif kind == 2:
            layers.append(nn.BatchNorm1d(a, dtype=dtype, device=device))  # buffers, which are not parameters
        else:
            layers.append(nn.Linear(a, b, bias=bool(pick(2)), dtype=dtype, device=device))
    model = nn.Sequential(*layers)
    weighted = [m for m in model if isinstance(m, (nn.Embedding, nn.Linear))]
    if len(weighted) >= 2 and pick(2):  # one Parameter under two names, as a tied head is
        weighted[-1].weight = weighted[0].weight
    for p in model.parameters():
        if pick(3) == 0:
            p.requires_grad_(False)
    return model


@lru_cache(maxsize=None)
def count_examples() -> list[Example]:
    from hypothesis import strategies as st

    return [(_built(lambda s=s: _model(s), seed=s),) for s in draw(st.integers(0, 2 ** 16), N)]


def count_reference(args: Example) -> int:
    seen: dict[int, nn.Parameter] = {}
    for module in args[0].modules():  # every module's own registry, deduplicated by the Parameter object
        for p in module._parameters.values():
            if p is not None:
                seen[id(p)] = p
    return sum(p.numel() for p in seen.values())


@lru_cache(maxsize=None)
def share_examples() -> list[Example]:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(1, 2 ** 20), st.integers(1, 2 ** 14), st.integers(0, 2 ** 62)), N)
    return ordered([(V, d, V * d + extra) for V, d, extra in drawn] + [(1, 1, 1), (2 ** 20, 2 ** 14, 2 ** 34 + 3)])


def share_reference(args: Example) -> float:
    V, d, total = args
    return float(Fraction(V * d, total))  # exact, then rounded once


def untied_reference(args: Example) -> int:
    V, d, total = args
    head = V * d  # the untied head's own table, as large as the embedding
    return total + head


def _check_share_generated(out, args: Example) -> None:
    _check_share(GENERATED_MODEL)(out, args)


def _check_untied_generated(out, args: Example) -> None:
    _check_untied(GENERATED_MODEL)(out, args)


@lru_cache(maxsize=None)
def rows_examples() -> list[Example]:
    from hypothesis import strategies as st

    drawn = draw(st.tuples(st.integers(0, 9), st.integers(1, 5), st.sampled_from(FLOAT_DTYPES),
                           st.sampled_from(LAYOUTS), st.integers(0, 2 ** 16)), N)
    out: list[Example] = []
    for V, d, dtype, layout, seed in drawn:
        grad = Recipe((V, d), dtype, "normal", 1.0, layout, seed).build().contiguous()
        g = torch.Generator().manual_seed(seed)
        keep = torch.rand(V, 1, generator=g) < 0.5  # about half the rows receive no gradient
        tiny = torch.rand(V, d, generator=g) < 0.3  # some entries the dtype's smallest non-zero number
        smallest = torch.tensor(torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps, dtype=dtype)
        grad = torch.where(tiny, smallest.expand(V, d), grad) * keep
        grad = torch.where(keep, grad, -torch.zeros_like(grad) if seed % 2 else grad)  # -0.0 is zero
        out.append((_as_layout(grad, layout),))
    return ordered(out)


def _as_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values as a non-contiguous view (transposed storage, every other column of a wider one)."""
    if layout == "transposed":
        return x.T.contiguous().T
    if layout == "sliced":
        return torch.stack([x, torch.ones_like(x)], -1).reshape(x.shape[0], -1)[:, ::2]
    return x


def rows_reference(args: Example) -> int:
    return sum(1 for row in args[0].double().tolist() if any(v != 0 for v in row))


# exercise -> (its examples, its check, the reference shown next to the learner's result)
GENERATED = {
    "count_parameters": (count_examples, _check_count, count_reference),
    "embedding_share": (share_examples, _check_share_generated, share_reference),
    "untied_total": (share_examples, _check_untied_generated, untied_reference),
    "rows_with_gradient": (rows_examples, _check_rows, rows_reference),
}
