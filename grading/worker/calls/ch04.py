"""Chapter 04's learner-side calls: draws on seeded generators, greedy decoding, frequencies."""
from __future__ import annotations

from typing import Any, Callable

import torch

SAMPLE_SEEDS = list(range(30))  # sample_next_token: one draw per seed
STAT_DRAWS = 2000  # sample_next_token: draws per frequency case


def raises(fn: Callable, inputs: tuple) -> dict:
    """Whether fn raised ValueError, and a short description of what it returned otherwise."""
    try:
        out = fn(*inputs)
    except ValueError:
        return {"raised": True, "returned": ""}
    got = "a tensor" if isinstance(out, torch.Tensor) else repr(out)[:80]
    if isinstance(out, torch.Tensor) and not bool(torch.isfinite(out).all()):
        got += " containing inf/NaN"
    return {"raised": False, "returned": got}


def seeded(fn: Callable, inputs: tuple) -> dict:
    """One draw per seed (10 seeds for a full-vocabulary case), and the first three seeds again."""
    logits, t, k, p = inputs
    seeds = SAMPLE_SEEDS[:10] if logits.numel() > 1000 else SAMPLE_SEEDS
    draws = [fn(logits.clone(), t, k, p, generator=torch.Generator().manual_seed(s)) for s in seeds]
    again = [fn(logits.clone(), t, k, p, generator=torch.Generator().manual_seed(s)) for s in seeds[:3]]
    return {"draws": draws, "again": again}


def one_generator(fn: Callable, inputs: tuple) -> dict:
    """30 draws from one generator seeded with 123."""
    logits, t, k, p = inputs
    gen = torch.Generator().manual_seed(123)
    return {"draws": [fn(logits.clone(), t, k, p, generator=gen) for _ in range(30)], "again": []}


def greedy_t0(fn: Callable, inputs: tuple) -> dict:
    """Temperature 0 on each row of a [N, V] tensor."""
    rows = inputs[0]
    return {"draws": [fn(r.clone(), 0.0, 3, 0.5, generator=torch.Generator().manual_seed(0)) for r in rows],
            "again": []}


def frequencies(fn: Callable, inputs: tuple) -> dict:
    """STAT_DRAWS draws from one generator seeded with 2024."""
    logits, t, k, p = inputs
    gen = torch.Generator().manual_seed(2024)
    return {"draws": [fn(logits, t, k, p, generator=gen) for _ in range(STAT_DRAWS)], "again": []}


def _refuse_generate(*_args, **_kwargs):
    raise RuntimeError("greedy_generate must write its own loop over model(ids).logits; "
                       "model.generate is the reference it is compared with.")


def greedy(fn: Callable, inputs: tuple) -> dict:
    """fn(model, ids, n) with model.generate refused (an instance attribute shadows the method): {"ids": what it
    returned, "alias": whether that is the ids it was given, or shares their memory}."""
    model, ids, n = inputs
    given = ids.clone()
    model.generate = _refuse_generate
    try:
        out = fn(model, given, n)
    finally:
        del model.generate
    alias = isinstance(out, torch.Tensor) and (out is given or (out.numel() > 0 and given.numel() > 0 and
                                                                out.untyped_storage().data_ptr()
                                                                == given.untyped_storage().data_ptr()))
    return {"ids": out, "alias": alias}


def t0_interleaved(fn: Callable, inputs: tuple) -> dict:
    """For each row of a [N, V] tensor: a temperature-0 call, then a temperature-1 call, on ONE generator (seed 7).

    A temperature-0 call that takes a draw from the generator shifts every later temperature-1 draw.
    """
    rows = inputs[0]
    gen = torch.Generator().manual_seed(7)
    draws: list[Any] = []
    for r in rows:
        draws.append(fn(r.clone(), 0.0, None, None, generator=gen))
        draws.append(fn(r.clone(), 1.0, None, None, generator=gen))
    return {"draws": draws, "again": []}


PROTOCOLS = {"raises": raises, "seeded": seeded, "one_generator": one_generator, "greedy_t0": greedy_t0,
             "frequencies": frequencies, "greedy": greedy, "t0_interleaved": t0_interleaved}
