"""References remembered per case input: a class runs each check on many students' outputs for the same inputs.

    @per_input
    def _reference(X: torch.Tensor, k: int) -> torch.Tensor: ...    # computed once per (X, k), then looked up

The judge builds each case's inputs once per run and never changes them, so a reference (or the wrong results of
the known mistakes) computed from them holds for every student. An entry is used only while every tensor and module
among the arguments is the very object it was computed from (held by a weak reference, so a freed input's id reused
by a new one is never mistaken for it) and unchanged since (its version counter, its parameters' counters); other
arguments are compared by value. Callers must not change what comes back.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Iterable, TypeVar

import torch

F = TypeVar("F", bound=Callable[..., Any])
MAX_ENTRIES = 256  # per function; a chapter has at most a few dozen cases


def _version(obj: torch.Tensor | torch.nn.Module) -> int:
    if isinstance(obj, torch.Tensor):
        return obj._version
    return sum(t._version for t in (*obj.parameters(), *obj.buffers()))


def per_input(fn: F) -> F:
    """`fn`, remembering its result per arguments: the same live, unchanged tensors and modules, equal other values."""
    cache: dict[tuple, tuple[list[weakref.ref], Any]] = {}

    @functools.wraps(fn)
    def remembered(*args: Any, **kwargs: Any) -> Any:
        values = (*args, *(v for _name, v in sorted(kwargs.items())))
        objects = [a for a in values if isinstance(a, (torch.Tensor, torch.nn.Module))]
        key = (tuple(sorted(kwargs)), *((id(a), _version(a)) if isinstance(a, (torch.Tensor, torch.nn.Module))
                                        else ("=", type(a), a) for a in values))
        try:
            hit = cache.get(key)
        except TypeError:  # an argument that cannot be a key (a list): nothing remembered
            return fn(*args, **kwargs)
        if hit is not None and all(ref() is a for ref, a in zip(hit[0], objects)):
            return hit[1]
        value = fn(*args, **kwargs)
        if len(cache) >= MAX_ENTRIES:  # a value that holds its own input keeps it alive: the oldest goes
            cache.pop(next(iter(cache)))
        forget = functools.partial(_forget, cache, key)
        cache[key] = ([weakref.ref(a, forget) for a in objects], value)
        return value

    return remembered  # type: ignore[return-value]


def _forget(cache: dict, key: tuple, _ref: weakref.ref) -> None:
    cache.pop(key, None)


class Later:
    """Known mistakes computed only when a check reads them, on a failure (`Later(_mistakes, X, k)`, with
    `_mistakes` a `per_input` function returning `evaluated(...)`): a passing result costs none of them."""

    def __init__(self, mistakes: Callable[..., list], *args: Any):
        self.mistakes, self.args = mistakes, args

    def __iter__(self):
        return iter(self.mistakes(*self.args))


def evaluated(mistakes: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """Each known mistake with its wrong result computed now, for a `per_input` list of them (a mistake that cannot
    be reproduced on this input, its function raising, is left out, as `named_mistake` would skip it)."""
    out = []
    for explanation, wrong in mistakes:
        try:
            out.append((explanation, wrong() if callable(wrong) else wrong))
        except Exception:
            continue
    return out
