"""Chapter 02 stretch: topk_logits_chunked, values and the size of what it builds."""
from __future__ import annotations

from functools import lru_cache

import torch

from ..compare import CheckFailed, expect_tensor, expect_tuple
from ..fixtures import CAT_PROMPT, course_ids, course_model, random_table, ranked_ids


# ---------------------------------------------------------------- stretch: topk_logits_chunked


def _int_valued(shape: tuple[int, ...], seed: int, high: int = 3) -> torch.Tensor:
    """Small integers as floats: every product and sum is exact, so equal logits are exactly equal."""
    return torch.randint(-high, high + 1, shape, generator=torch.Generator().manual_seed(seed)).float()


@lru_cache(maxsize=1)
def _course_last_state() -> torch.Tensor:
    """The course model's final (normed) hidden state after 'The cat sat on the', [1, 576]."""
    with torch.no_grad():
        out = course_model()[0](course_ids(CAT_PROMPT)[None], output_hidden_states=True)
    return out.hidden_states[-1][0, -1:].clone()


def _course_topk_case() -> tuple:
    from ..fixtures import course_embedding

    return _course_last_state(), course_embedding(), 10, 4096


CHUNKED_INPUTS = {
    "the docstring example: a tie at the top goes to the lower id, V = 5, chunk = 2": lambda: (
        torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 0.0], [3.0, 0.0], [0.0, 0.0]]), 2, 2),
    "many exact ties (integer-valued), N = 3, V = 37, k = 5, chunk = 8": lambda: (
        _int_valued((3, 4), 120), _int_valued((37, 4), 121), 5, 8),
    "k larger than a chunk (the best k span chunks), V = 41, k = 9, chunk = 4": lambda: (
        _int_valued((2, 3), 122), _int_valued((41, 3), 123), 9, 4),
    "chunk = 1 (one vocabulary row at a time), V = 19, k = 3": lambda: (
        random_table(2, 5, 124, torch.float64), random_table(19, 5, 125, torch.float64), 3, 1),
    "V not a multiple of chunk (a short last chunk), V = 103, k = 4, chunk = 25": lambda: (
        random_table(3, 6, 126, torch.float64), random_table(103, 6, 127, torch.float64), 4, 25),
    "k = V: every id, sorted, V = 23, chunk = 6": lambda: (
        _int_valued((2, 3), 128), _int_valued((23, 3), 129), 23, 6),
    "the best ids all in the last chunk, V = 50, k = 3, chunk = 16": lambda: _last_chunk_best(),
    "float64, N = 4, d = 16, V = 203, k = 7, chunk = 50": lambda: (
        random_table(4, 16, 130, torch.float64), random_table(203, 16, 131, torch.float64), 7, 50),
    "the course model: h after 'The cat sat on the' and E [49152, 576], k = 10, chunk = 4096": _course_topk_case,
}


def _last_chunk_best() -> tuple:
    W = random_table(50, 4, 132, torch.float64)
    W[-3:] *= 20.0  # ids 47, 48, 49 (in the short last chunk 48..49 and the one before) dominate
    return random_table(2, 4, 133, torch.float64).abs() + 1.0, W.abs(), 3, 16


def _reference_chunked(h: torch.Tensor, W: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Full logits in float64, stable descending sort (ties to the lower id), first k."""
    logits = h.double() @ W.double().T
    ids = ranked_ids(logits)[:, :k]
    return logits.gather(-1, ids), ids


def _check_chunked(result, inputs):
    out, calls = result
    h, W, k, chunk = inputs
    V = W.shape[0]
    values, ids = expect_tuple(out, 2, "topk_logits_chunked -> (values, ids)")
    ref_v, ref_i = _reference_chunked(h, W, k)
    logits = h.double() @ W.double().T
    exact = h.dtype == torch.float64 or bool((h == h.round()).all() and (W == W.round()).all())
    tol = 1e-9 if exact else 1e-3
    id_mistakes = [
        ("ascending order: the largest logits come first (descending=True).",
         lambda: ranked_ids(-logits)[:, :k]),
        ("ties go to the LOWER id: sort by id first, then stably by value (or merge so that earlier ids win).",
         lambda: (V - 1 - ranked_ids(logits.flip(-1)))[:, :k]),
        ("ids local to their chunk: add the chunk's start (id = start + position in the chunk).",
         lambda: ref_i % chunk),
        ("only the first chunk was searched: every chunk's candidates must compete.",
         lambda: ranked_ids(logits[:, :chunk])[:, :k] if k <= min(chunk, V) else None),
    ]
    expect_tensor(values, ref_v.to(h.dtype), "values (the top-k logits)", atol=tol, rtol=tol, mistakes=[
        ("ascending order: the largest logits come first.", lambda: logits.gather(-1, ranked_ids(-logits)[:, :k])),
        ("only the first chunk was searched: every chunk's candidates must compete.",
         lambda: logits[:, :chunk].sort(-1, descending=True).values[:, :k] if k <= min(chunk, V) else None),
    ])
    if not (isinstance(ids, torch.Tensor) and ids.dtype == torch.long and ids.shape == ref_i.shape):
        expect_tensor(ids, ref_i, "ids", atol=0, rtol=0, mistakes=id_mistakes)
    if exact:
        expect_tensor(ids, ref_i, "ids (ties by lower id)", atol=0, rtol=0, mistakes=id_mistakes)
    else:  # float32 real data: another summation order may swap nearly equal logits; each id must carry its value
        ok = bool(((ids >= 0) & (ids < V)).all())
        if ok:
            got = logits.gather(-1, ids)
            ok = bool(torch.allclose(got, values.double(), atol=tol, rtol=tol)) and all(
                len(set(r)) == k for r in ids.tolist())
        if not ok:
            expect_tensor(ids, ref_i, "ids (each the id of its value, no id twice)", atol=0, rtol=0,
                          mistakes=id_mistakes)
    if chunk < V:
        for name, shapes in calls:
            wide = next((s for s in shapes if len(s) >= 2 and s[-1] >= V and s[-1] > k + chunk
                         and s != list(W.shape)), None)
            if wide is not None:
                raise CheckFailed(f"right values, but {name} received a tensor of shape {wide}: a full row of V = {V} "
                              f"logits (or W.T, [d, V]) was formed. Work on W[start:start + chunk] ({chunk} rows at "
                              "a time) and keep only the best k candidates between chunks.")
