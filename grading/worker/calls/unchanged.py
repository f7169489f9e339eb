"""The "+unchanged" variant of a call: the same call, and the input tensors it changed in place.

A function that returns its result must leave the caller's tensors as they were. `wrap(call)` snapshots every
tensor reachable from the inputs (through tuples, lists, dicts and nn.Module parameters and buffers) before the
call and reports, after it, the paths of those that changed ("#0" is the first argument, "#0[1]" an item of it,
"#0.lm_head.weight" a parameter of a module). The judge names the argument (grading/checks/unchanged.py).
"""
from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

UNCHANGED = "+unchanged"  # suffix of a call's name that also reports the inputs it changed in place
COPY_MAX = 1 << 16  # tensors up to this many elements are copied whole; larger ones are summed bit for bit
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}  # element size -> same-size integer dtype


def _tensors_in(value: Any, path: str, out: list, seen: set) -> None:
    if id(value) in seen:
        return
    if isinstance(value, torch.Tensor):
        seen.add(id(value))
        out.append((path, value))
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            _tensors_in(v, f"{path}[{i}]", out, seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            _tensors_in(v, f"{path}[{k!r}]", out, seen)
    elif isinstance(value, nn.Module):
        seen.add(id(value))
        for name, t in [*value.named_parameters(remove_duplicate=False), *value.named_buffers()]:
            if id(t) not in seen:
                seen.add(id(t))
                out.append((f"{path}.{name}", t))


def _sample(t: torch.Tensor) -> torch.Tensor | None:
    if t.device.type == "meta" or t.layout != torch.strided:
        return None  # no values to compare (shape, dtype and version counter still are)
    flat = t.detach().reshape(-1)
    if flat.numel() <= COPY_MAX or flat.element_size() not in _BITS:
        return flat.clone()
    # every element's bits summed as integers of the same width (wrapping): a write to any one element changes the
    # sum, and no widening copy is made (a 28M-element table costs a few times a clone less)
    bits = _BITS[flat.element_size()]
    return flat.view(bits).sum(dtype=bits).reshape(1)


def _same(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    if a is None or b is None:
        return a is b
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def tensors_in(inputs: tuple) -> list[tuple[str, torch.Tensor]]:
    """(path, tensor) for every tensor reachable from the inputs, each once, in a fixed order."""
    found: list = []
    seen: set = set()
    for i, value in enumerate(inputs):
        _tensors_in(value, f"#{i}", found, seen)
    return found


def snapshot(inputs: tuple) -> list:
    """Per tensor reachable from the inputs: (path, tensor, shape, dtype, version counter, values or a sample)."""
    return [(path, t, tuple(t.shape), t.dtype, t._version, _sample(t)) for path, t in tensors_in(inputs)]


def changed_inputs(before: list) -> list[str]:
    """The paths of the snapshot's tensors that changed since: values, shape, dtype or an in-place op."""
    return [path for path, t, shape, dtype, version, values in before
            if not (tuple(t.shape) == shape and t.dtype == dtype and t._version == version
                    and _same(_sample(t), values))]


def wrap(call: Callable[[Callable, tuple], Any]) -> Callable[[Callable, tuple], dict]:
    """`call` (fn, inputs) -> {"out": what call returns, "changed": the input paths it changed in place}."""
    def unchanged(fn: Callable, inputs: tuple) -> dict:
        before = snapshot(inputs)
        return {"out": call(fn, inputs), "changed": changed_inputs(before)}
    unchanged.__doc__ = f"{call.__name__}(fn, inputs), and the paths of the input tensors it changed in place."
    return unchanged
