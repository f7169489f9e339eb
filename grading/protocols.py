"""How the learner's function is called: the only grading code that runs in the learner's process.

A case names its protocol (`Case(..., call="seeded")`); the sandboxed child looks the name up in
PROTOCOLS and calls `protocol(learner_fn, inputs)`. This module holds no reference answers and
imports nothing from the chapter checks, so loading it next to learner code reveals nothing.

Learner code shares the process with these functions and could replace them, so a protocol only
ever *observes*: whatever it reports is re-verified by the judge wherever the returned values
allow (draws against the judge's own draws, tensors against the judge's own tensors).
"""
from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

Protocol = Callable[[Callable, tuple], Any]

# ---------------------------------------------------------------- shared constants (judge and child)

SAMPLE_SEEDS = list(range(30))  # ch04 sample_next_token: one draw per seed
STAT_DRAWS = 2000  # ch04 sample_next_token: draws per frequency case
STEP_LR = 0.5  # ch03 tie_weights: learning rate of the observed SGD step


def call(fn: Callable, inputs: tuple) -> Any:
    """The default protocol: fn(*inputs)."""
    return fn(*inputs)


def quiz(answers: Any, _inputs: tuple) -> Any:
    """The child passes the learner's QUIZ dict in place of a function; it is sent back as is."""
    return answers


# ---------------------------------------------------------------- ch01: which ops ran

class RecordOps(TorchFunctionMode):
    """Records each torch function called, with the shapes of its tensor arguments."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, list[list[int]]]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        shapes = [list(a.shape) for a in args if isinstance(a, torch.Tensor)]
        self.calls.append((getattr(func, "__name__", str(func)), shapes))
        return func(*args, **(kwargs or {}))


def record_ops(fn: Callable, inputs: tuple) -> tuple[Any, list]:
    """(fn(*inputs), [(op name, argument shapes), ...])."""
    with RecordOps() as rec:
        out = fn(*inputs)
    return out, rec.calls


# ---------------------------------------------------------------- ch03: tying observed

def same_storage(a: Any, b: Any) -> bool:
    """Whether two tensors live in the same storage."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def sgd_step_through_head(emb: nn.Embedding, head: nn.Linear, x: torch.Tensor, targets: torch.Tensor) -> None:
    """One plain SGD step (p -= lr * p.grad) on a loss computed from the head's logits only.

    The loss is cross-entropy plus a small penalty on the logits' size (so that even a one-token
    vocabulary, whose cross-entropy is always 0, gets a gradient); the embedding's lookup is not used.
    """
    params = list(nn.ModuleList([emb, head]).parameters())  # a shared Parameter is listed once
    logits = head(x)
    (F.cross_entropy(logits, targets) + 0.1 * logits.pow(2).mean()).backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= STEP_LR * p.grad


def observe_tying(fn: Callable, inputs: tuple) -> dict:
    """Tie, then report what can only be seen here (identity, storage) and the values."""
    emb, head, x, targets = inputs
    fn(emb, head)
    w = head.weight
    obs = {
        "is_tensor": isinstance(w, torch.Tensor),
        "same_object": w is emb.weight,
        "same_storage": same_storage(w, emb.weight),
        "n_parameters": len(list(nn.ModuleList([emb, head]).parameters())),
        "embedding_after_tie": emb.weight.detach().clone(),
    }
    if not obs["is_tensor"]:
        return obs
    obs["head_shape"] = tuple(w.shape)
    obs["head_after_tie"] = w.detach().clone()
    if obs["head_shape"] == tuple(emb.weight.shape):
        sgd_step_through_head(emb, head, x, targets)
        obs["embedding_after_step"] = emb.weight.detach().clone()
        obs["head_after_step"] = head.weight.detach().clone()
        obs["bias_after_step"] = head.bias.detach().clone() if head.bias is not None else None
        obs["pair"] = (emb.weight, head.weight)  # sent as is: the judge sees whether they share storage
    return obs


# ---------------------------------------------------------------- ch04: sampling calls

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


def greedy(fn: Callable, inputs: tuple) -> Any:
    """fn(model, ids, n) with model.generate refused (an instance attribute shadows the method)."""
    model, ids, n = inputs
    model.generate = _refuse_generate
    try:
        return fn(model, ids.clone(), n)
    finally:
        del model.generate


# ---------------------------------------------------------------- ch07: a loss and its gradients

def backward(fn: Callable, inputs: tuple) -> tuple:
    """fn(h, W, *rest) on fresh leaf copies of h and W that require grad, then loss.backward().

    Returns (loss, h.grad, W.grad, ops as record_ops reports them, shapes of the tensors autograd saved
    for backward other than views of h and W); the grads are None when the loss does not require grad.
    The judge recomputes the gradients itself; only what autograd kept alive is observed here.
    """
    h, W, *rest = inputs
    h = h.detach().clone().requires_grad_(True)
    W = W.detach().clone().requires_grad_(True)
    own = {h.untyped_storage().data_ptr(), W.untyped_storage().data_ptr()}
    saved: list[tuple[int, ...]] = []

    def pack(x):
        if isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() not in own:
            saved.append(tuple(x.shape))
        return x

    with RecordOps() as rec, torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        loss = fn(h, W, *rest)
    if not (isinstance(loss, torch.Tensor) and loss.requires_grad):
        return loss, None, None, rec.calls, saved
    loss.backward()
    return loss.detach(), h.grad, W.grad, rec.calls, saved


PROTOCOLS: dict[str, Protocol] = {
    "call": call, "quiz": quiz, "record_ops": record_ops, "observe_tying": observe_tying,
    "raises": raises, "seeded": seeded, "one_generator": one_generator, "greedy_t0": greedy_t0,
    "frequencies": frequencies, "greedy": greedy, "backward": backward,
}


def _chapter_protocols() -> None:
    """Merge PROTOCOLS from grading/protocols_chNN.py files (a chapter's own learner-side calls)."""
    import importlib
    import pkgutil
    from pathlib import Path

    for m in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda m: m.name):
        if m.name.startswith("protocols_"):
            extra = importlib.import_module(f"{__package__}.{m.name}").PROTOCOLS
            clash = sorted(set(extra) & set(PROTOCOLS))
            if clash:
                raise TypeError(f"grading/{m.name}.py redefines protocols {clash}; use names of its own")
            PROTOCOLS.update(extra)


_chapter_protocols()
