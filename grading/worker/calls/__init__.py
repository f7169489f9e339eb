"""How the learner's function is called (a case's `call=`): the only grading code that runs in the learner's process.

One module per chapter (chNN.py) holds that chapter's calls and its own PROTOCOLS; base.py the default ones.

A case names its protocol (`Case(..., call="seeded")`); the sandboxed child looks the name up in
PROTOCOLS and calls `protocol(learner_fn, inputs)`. This module holds no reference answers and
imports nothing from the chapter checks, so loading it next to learner code reveals nothing.

Learner code shares the process with these functions and could replace them, so a protocol only
ever *observes*: whatever it reports is re-verified by the judge wherever the returned values
allow (draws against the judge's own draws, tensors against the judge's own tensors).
"""
from __future__ import annotations

from typing import Any, Callable

from . import base, ch01, ch03, ch04, ch07
from .base import call, quiz  # noqa: F401  (the default protocol, by name)

Protocol = Callable[[Callable, tuple], Any]


def _merged(*modules) -> dict[str, Protocol]:
    merged: dict[str, Protocol] = {}
    for m in modules:
        clash = sorted(set(m.PROTOCOLS) & set(merged))
        if clash:
            raise TypeError(f"{m.__name__} redefines calls {clash}; use names of its own")
        merged.update(m.PROTOCOLS)
    return merged


PROTOCOLS: dict[str, Protocol] = _merged(base, ch01, ch03, ch04, ch07)
