"""Chapter 07 on generated inputs: every exercise but chunked_cross_entropy (its check needs gradients and memory
records) against torch on the unsharded tensor.

Each example is made by cutting one full tensor into rank slices (common.split, torch.tensor_split's layout), so the
reference is what torch computes on the whole: torch.logsumexp, torch.argmax, a stable sort, F.embedding and
F.cross_entropy. World sizes 1 to 9 over vocabularies of 1 to 12 tokens (so most do not divide V, and ranks
that own nothing are common), -inf entries, rows a million-fold apart in scale, ties, batch shapes and
non-contiguous views. merge_logsumexp and vocab_parallel_cross_entropy get float32 and float64 (their tolerances are
float32's); the others, whose results are exact, every float dtype. merge_top_k gets as many rows per rank as
the ranks send (its contract has no rank with fewer than k_r rows).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import torch
import torch.nn.functional as F

from ...i18n import _
from ...model import Chapter, CheckFailed
from ..properties import Example, Recipe, draw, generated, recipes, size
from ..unchanged import argument_names
from .common import ranges, split
from .cross_entropy import _check_ce
from .merging import _argmax_inputs, _check_argmax, _check_lse, _check_topk, _local_stats
from .sharding import _check_lookup, _check_shard

N = 40  # generated inputs per exercise, besides the edge cases each lists by hand
NEG_INF = float("-inf")
EXACT = (torch.float32, torch.float64)


class Keyed:
    """Examples and the judge-only data each one was cut from (the full tensor), found again from the example."""

    def __init__(self, pairs: list[tuple[Example, Any]]):
        self.pairs = pairs
        self.examples = sorted([args for args, _ref in pairs], key=lambda args: size(_flat(args)))  # small first

    def ref(self, args: Example) -> Any:
        for a, r in self.pairs:  # the judge's own objects: found by identity
            if a is args:
                return r
        for a, r in self.pairs:  # a copy (unpickled): found by value
            if _same(a, args):
                return r
        raise RuntimeError("internal: a generated example the chapter did not make")


def _flat(args: Example) -> tuple:
    """The arguments with each list of rank slices spread out (properties.size counts top-level tensors only)."""
    return tuple(t for a in args for t in (a if isinstance(a, list) else [a]))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else
                isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _world(r: Recipe) -> int:
    return 1 + r.seed % 9


def _rows(r: Recipe) -> torch.Tensor:
    """The recipe's tensor as rows [N, V] (a batch of no rows stays one)."""
    x = r.build()
    return x.reshape(-1, x.shape[-1])


def _strided(parts: list[torch.Tensor], seed: int) -> list[torch.Tensor]:
    """Some rank slices as non-contiguous views holding the same values (a transposed copy, transposed back)."""
    return [p.T.contiguous().T if (seed + i) % 3 == 0 and p.dim() == 2 else p for i, p in enumerate(parts)]


# ---------------------------------------------------------------- shard_range


@lru_cache(maxsize=None)
def shard_examples() -> Keyed:
    from hypothesis import strategies as st

    small = st.tuples(st.integers(1, 40), st.integers(1, 12), st.integers(0, 2 ** 16))
    found = [(v, w, s % w) for v, w, s in draw(small, N)]
    found += [(3, 8, 7), (1, 1, 0), (50257, 8, 1), (151936, 7, 6), (5, 5, 4), (6, 4, 2)]
    return Keyed([(args, None) for args in found])


def shard_reference(args: Example) -> tuple[int, int]:
    return ranges(args[0], args[1])[args[2]]


# ---------------------------------------------------------------- vocab_parallel_lookup


@lru_cache(maxsize=None)
def lookup_examples() -> Keyed:
    pairs = []
    for r in recipes(N, max_v=12):
        g = torch.Generator().manual_seed(r.seed)
        V, d = r.shape[-1], 1 + r.seed % 4
        E = Recipe((V, d), r.dtype, "ties" if r.kind == "ties" else "normal", r.scale, r.layout, r.seed).build()
        world = _world(r)
        rank = r.seed % world
        s, e = ranges(V, world)[rank]
        shape = tuple(r.shape[:-1]) + ((r.seed % 5,) if r.seed % 2 else ())  # 0-d, [T], [B, T], ... and empty ones
        ids = torch.randint(0, V, shape, generator=g)
        if ids.dim() == 2 and r.layout == "transposed":
            ids = ids.T.contiguous().T
        shard = E[s:e]
        shard = shard.clone() if r.layout != "sliced" else shard  # a view of the full table: still [V_r, d]
        pairs.append(((shard, ids, s), (E, ids, s, e)))
    E = torch.arange(12.0).reshape(6, 2)
    pairs.append(((E[2:4].clone(), torch.tensor([1, 2, 3, 5]), 2), (E, torch.tensor([1, 2, 3, 5]), 2, 4)))
    pairs.append(((E[6:6].clone(), torch.tensor(5), 6), (E, torch.tensor(5), 6, 6)))  # owns nothing, a 0-d id
    return Keyed(pairs)


def lookup_reference(args: Example, ref) -> torch.Tensor:
    E, ids, s, e = ref
    inside = ((ids >= s) & (ids < e)).unsqueeze(-1)
    return torch.where(inside, F.embedding(ids, E), torch.zeros((), dtype=E.dtype))


# ---------------------------------------------------------------- merge_logsumexp


@lru_cache(maxsize=None)
def lse_examples() -> Keyed:
    pairs = []
    for r in recipes(N, dtypes=EXACT):
        x = r.build()
        world = _world(r)
        m, s = _local_stats(x, world, nan_for_empty=bool(r.seed % 2))
        pairs.append(((m, s), x))
    # all ranks' maxima -inf but one, whose logits lie far below 0: a -inf max read as 0 underflows the rest
    # (and a row of logits near +1000 on every rank, where exp without any shift overflows instead)
    x = torch.full((3, 12), NEG_INF, dtype=torch.float64)
    x[0, 6:9] = torch.tensor([-1000.0, -1001.0, -999.5], dtype=torch.float64)
    x[1, 1] = -700.0
    x[2] = 1000.0 + torch.arange(12, dtype=torch.float64) / 7
    for world in (4, 3):
        for nan in (True, False):
            pairs.append((_local_stats(x, world, nan), x))
    dead = torch.tensor([[NEG_INF, NEG_INF, NEG_INF], [1.0, 2.0, 3.0]])
    pairs.append((_local_stats(dead, 2), dead))
    small = torch.tensor([0.5], dtype=torch.float64)  # one token, one rank: an epsilon added to the sum shows
    pairs.append((_local_stats(small, 1), small))
    return Keyed(pairs)


def lse_reference(args: Example, x: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(x.double(), dim=-1).to(x.dtype)


# ---------------------------------------------------------------- ids past float32's integers

FAR = 2 ** 24  # where float32's whole numbers end: odd ids past it, computed in float32, come out rounded
THROUGH_FLOAT32 = _("your global ids went through float32 (a float tensor of ids, torch.where or full_like with a "
                    "float fill, a .float() on the way): float32 holds whole numbers exactly only up to 2**24 = "
                    "16,777,216, and a vocabulary's ids go past that. Keep ids in int64 (LongTensor) throughout.")


class Far:
    """A vocabulary whose ranks start at id FAR (the example's starts are shifted): `x` is the full tensor the
    example was cut from, its ids counted from 0."""

    def __init__(self, x: torch.Tensor):
        self.x = x


def _far(args: Example, x: torch.Tensor) -> tuple[Example, Far]:
    """The same example with every rank's start moved FAR ids on."""
    return args[:2] + (args[2] + FAR,) + args[3:], Far(x)


def _near(args: Example) -> Example:
    return args[:2] + (args[2] - FAR,) + args[3:]


def _shift(out: Any, by: int) -> Any:
    """`out` with its ids (a LongTensor, or the second item of a pair) moved by `by`; anything else unchanged."""
    if isinstance(out, torch.Tensor) and out.dtype == torch.long:
        return out + by
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], torch.Tensor) and out[1].dtype == torch.long:
        return out[0], out[1] + by
    return out


def _check_far(check: Callable, out: Any, args: Example, x: torch.Tensor, reference: Callable | None) -> None:
    """Check `out` as if the ranks started at 0; an answer whose ids are the right ones rounded through float32
    gets that named."""
    try:
        check(_shift(out, -FAR), _near(args), x)
    except CheckFailed as e:
        ids = out[1] if isinstance(out, tuple) and len(out) == 2 else out
        if reference is not None and isinstance(ids, torch.Tensor):
            want = _shift(reference(_near(args), x), FAR)
            want = want[1] if isinstance(want, tuple) else want
            if ids.shape == want.shape and torch.equal(ids.double(), want.float().double()):
                raise CheckFailed(e.message, THROUGH_FLOAT32) from None
        raise


# ---------------------------------------------------------------- vocab_parallel_argmax


@lru_cache(maxsize=None)
def argmax_examples() -> Keyed:
    pairs = []
    for r in recipes(N):
        x = r.build()
        args, _x = _argmax_inputs(x, _world(r))
        pairs.append((args, x))
    x = torch.full((1, 5), NEG_INF)
    x[0, 3] = -3.0  # every rank's max -inf but one
    pairs.append((_argmax_inputs(x, 4)[0], x))
    x = torch.tensor([[0.5, 3.0, -1.0, 2.0], [4.0, 1.0, 0.0, 4.5]])
    pairs.append(_far(_argmax_inputs(x, 2)[0], x))  # ids past 2**24
    return Keyed(pairs)


def argmax_reference(args: Example, x: torch.Tensor) -> torch.Tensor:
    return x.argmax(dim=-1)


# ---------------------------------------------------------------- merge_top_k


def _local_top_smaller_first(x: torch.Tensor, world: int, k_local: int, seed: int):
    """Each rank's k_local best by (value, smaller id), sent in a shuffled order (any order is allowed): the global
    top-k by (value, smaller id) is then always among what the ranks sent."""
    parts, starts = split(x, world)
    g = torch.Generator().manual_seed(seed)
    values, indices = [], []
    for p in parts:
        local = p.argsort(dim=-1, descending=True, stable=True)[..., :k_local]
        local = local[..., torch.randperm(k_local, generator=g)]
        values.append(p.gather(-1, local))
        indices.append(local)
    return torch.stack(values), torch.stack(indices), torch.tensor(starts)


@lru_cache(maxsize=None)
def topk_examples() -> Keyed:
    pairs = []
    for r in recipes(N, max_v=4):
        world = 1 + r.seed % 4
        k_local = 1 + (r.seed // 4) % 3
        k = 1 + (r.seed // 12) % k_local
        batch = tuple(r.shape[:-1])
        full = Recipe(batch + (world * k_local + r.shape[-1] % 3,), r.dtype, r.kind, r.scale, r.layout, r.seed)
        x = full.build()
        if x.shape[-1] < world * k_local:
            continue
        lv, li, starts = _local_top_smaller_first(x, world, k_local, r.seed)
        pairs.append(((lv, li, starts, k), x))
    x = torch.full((200,), -10.0)
    x[[0, 5, 101, 102]] = torch.tensor([9.0, 4.0, 9.0, 7.0])
    pairs.append(((torch.tensor([[9.0, 4.0], [7.0, 9.0]]), torch.tensor([[0, 5], [2, 1]]), torch.tensor([0, 100]), 2),
                  x))
    x = torch.tensor([0.5, 3.0, -1.0, 2.0, 6.0, 1.0])
    lv, li, starts = _local_top_smaller_first(x, 2, 2, 0)
    pairs.append(_far((lv, li, starts, 2), x))  # ids past 2**24
    return Keyed(pairs)


def topk_reference(args: Example, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    order = torch.sort(x, dim=-1, descending=True, stable=True).indices[..., :args[3]]
    return x.gather(-1, order), order


# ---------------------------------------------------------------- vocab_parallel_cross_entropy


def _finite_targets(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """One target per row, among the row's finite logits (a target on a -inf logit is left out: its loss is inf)."""
    weights = torch.isfinite(x).double()
    return torch.multinomial(weights, 1, generator=g)[:, 0] if x.shape[0] else torch.zeros(0, dtype=torch.long)


@lru_cache(maxsize=None)
def ce_examples() -> Keyed:
    pairs = []
    for r in recipes(N, dtypes=EXACT):
        x = _rows(r)
        parts, starts = split(x, _world(r))
        t = _finite_targets(x, torch.Generator().manual_seed(r.seed))
        pairs.append(((_strided(parts, r.seed), t, starts), x))
    # rows of very different scales: one max for the whole batch underflows every row far below it
    x = torch.tensor([[1.0, 2.0, 0.5, -1.0], [3000.0, 2999.0, 2998.5, 2990.0]])
    parts, starts = split(x, 3)
    pairs.append(((parts, torch.tensor([1, 0]), starts), x))
    return Keyed(pairs)


def ce_reference(args: Example, x: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(x.double(), args[1], reduction="none").to(x.dtype)


# ---------------------------------------------------------------- the chapter


def _with_ref(table: Callable[[], Keyed], check: Callable, wrap: Callable | None = None,
              reference: Callable | None = None):
    def checked(out, args):
        ref = table().ref(args)
        if isinstance(ref, Far):
            return _check_far(check, out, args, ref.x, reference)
        check(wrap(out) if wrap else out, args, ref)
    return checked


def _reference(table: Callable[[], Keyed], fn: Callable):
    def expected(args):
        ref = table().ref(args)
        return _shift(fn(_near(args), ref.x), FAR) if isinstance(ref, Far) else fn(args, ref)
    return expected


# exercise -> (its examples, the chapter's check on (out, args), the reference shown next to the learner's result)
GENERATED = {
    "shard_range": (lambda: shard_examples().examples, _check_shard, shard_reference),
    "vocab_parallel_lookup": (lambda: lookup_examples().examples, _with_ref(lookup_examples, _check_lookup),
                              _reference(lookup_examples, lookup_reference)),
    "merge_logsumexp": (lambda: lse_examples().examples, _with_ref(lse_examples, _check_lse),
                        _reference(lse_examples, lse_reference)),
    "vocab_parallel_argmax": (lambda: argmax_examples().examples,
                              _with_ref(argmax_examples, _check_argmax, reference=argmax_reference),
                              _reference(argmax_examples, argmax_reference)),
    "merge_top_k": (lambda: topk_examples().examples, _with_ref(topk_examples, _check_topk, reference=topk_reference),
                    _reference(topk_examples, topk_reference)),
    "vocab_parallel_cross_entropy": (lambda: ce_examples().examples,
                                     _with_ref(ce_examples, _check_ce, lambda out: (out, [])),
                                     _reference(ce_examples, ce_reference)),
}


def with_generated(chapter: Chapter) -> Chapter:
    """Give each exercise of GENERATED one more case: its generated inputs, checked as its named cases are."""
    names = argument_names(chapter.module)
    for ex in chapter.exercises:
        if ex.name in GENERATED:
            ex.cases.append(generated(_("generated inputs (world sizes, ranks that own nothing, dtypes, -inf, views), "
                                        "smallest failure shown"), *GENERATED[ex.name], names=names.get(ex.name, [])))
    return chapter
