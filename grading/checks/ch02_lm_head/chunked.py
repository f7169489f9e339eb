"""Chapter 02 stretch: topk_logits_chunked, values and the size of what it builds."""
from __future__ import annotations

from functools import lru_cache

import torch

from ..compare import CheckFailed, expect_tensor, expect_tuple
from ..fixtures import CAT_PROMPT, course_ids, course_model, random_table, ranked_ids
from ..memo import per_input
from ...i18n import _, verbatim


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
    _("the docstring example: a tie at the top goes to the lower id, V = 5, chunk = 2"): lambda: (
        torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 0.0], [3.0, 0.0], [2.0, 0.0], [3.0, 0.0], [0.0, 0.0]]), 2, 2),
    _("many exact ties (integer-valued), N = 3, V = 37, k = 5, chunk = 8"): lambda: (
        _int_valued((3, 4), 120), _int_valued((37, 4), 121), 5, 8),
    _("k larger than a chunk (the best k span chunks), V = 41, k = 9, chunk = 4"): lambda: (
        _int_valued((2, 3), 122), _int_valued((41, 3), 123), 9, 4),
    _("chunk = 1 (one vocabulary row at a time), V = 19, k = 3"): lambda: (
        random_table(2, 5, 124, torch.float64), random_table(19, 5, 125, torch.float64), 3, 1),
    _("V not a multiple of chunk (a short last chunk), V = 103, k = 4, chunk = 25"): lambda: (
        random_table(3, 6, 126, torch.float64), random_table(103, 6, 127, torch.float64), 4, 25),
    _("k = V: every id, sorted, V = 23, chunk = 6"): lambda: (
        _int_valued((2, 3), 128), _int_valued((23, 3), 129), 23, 6),
    _("the best ids all in the last chunk, V = 50, k = 3, chunk = 16"): lambda: _last_chunk_best(),
    _("float64, N = 4, d = 16, V = 203, k = 7, chunk = 50"): lambda: (
        random_table(4, 16, 130, torch.float64), random_table(203, 16, 131, torch.float64), 7, 50),
    _("the course model: h after 'The cat sat on the' and E [49152, 576], k = 10, chunk = 4096"): _course_topk_case,
    _("float16 keeps float16 (integer-valued, exact), V = 45, k = 6, chunk = 8"): lambda: (
        _int_valued((3, 4), 134).half(), _int_valued((45, 4), 135).half(), 6, 8),
    _("bfloat16 keeps bfloat16 (integer-valued, exact), V = 30, k = 4, chunk = 7"): lambda: (
        _int_valued((2, 3), 136).bfloat16(), _int_valued((30, 3), 137).bfloat16(), 4, 7),
}


def _last_chunk_best() -> tuple:
    W = random_table(50, 4, 132, torch.float64)
    W[-3:] *= 20.0  # ids 47, 48, 49 (in the short last chunk 48..49 and the one before) dominate
    return random_table(2, 4, 133, torch.float64).abs() + 1.0, W.abs(), 3, 16


@per_input
def _logits64(h: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Every logit, in float64."""
    return h.double() @ W.double().T


@per_input
def _reference_chunked(h: torch.Tensor, W: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Full logits in float64, stable descending sort (ties to the lower id), first k."""
    logits = _logits64(h, W)
    ids = ranked_ids(logits)[:, :k]
    return logits.gather(-1, ids), ids


def _check_chunked(result, inputs):
    out, calls = result
    h, W, k, chunk = inputs
    V = W.shape[0]
    values, ids = expect_tuple(out, 2, _("topk_logits_chunked -> (values, ids)"))
    ref_v, ref_i = _reference_chunked(h, W, k)
    logits = _logits64(h, W)
    exact = h.dtype == torch.float64 or bool((h == h.round()).all() and (W == W.round()).all())
    tol = 1e-9 if exact else 1e-3
    id_mistakes = [
        (_("ascending order: the largest logits come first (descending=True)."),
         lambda: ranked_ids(-logits)[:, :k]),
        (_("ties go to the LOWER id: sort by id first, then stably by value (or merge so that earlier ids win)."),
         lambda: (V - 1 - ranked_ids(logits.flip(-1)))[:, :k]),
        (_("ids local to their chunk: add the chunk's start (id = start + position in the chunk)."),
         lambda: ref_i % chunk),
        (_("only the first chunk was searched: every chunk's candidates must compete."),
         lambda: ranked_ids(logits[:, :chunk])[:, :k] if k <= min(chunk, V) else None),
    ]
    full = V // chunk * chunk  # the rows of W in whole chunks
    if 0 < full < V and k <= full:
        dropped = _("the last, shorter chunk (the final V % chunk rows of W) was never scored: loop with "
                    "range(0, V, chunk), and W[start:start + chunk] gives the short chunk by itself.")
        id_mistakes.append((dropped, lambda: ranked_ids(logits[:, :full])[:, :k]))
        value_mistakes = [(dropped, lambda: logits[:, :full].gather(-1, ranked_ids(logits[:, :full])[:, :k]))]
    else:
        value_mistakes = []
    expect_tensor(values, ref_v.to(h.dtype), _("values (the top-k logits)"), atol=tol, rtol=tol,
                  mistakes=value_mistakes + [
        (_("ascending order: the largest logits come first."), lambda: logits.gather(-1, ranked_ids(-logits)[:, :k])),
        (_("only the first chunk was searched: every chunk's candidates must compete."),
         lambda: logits[:, :chunk].sort(-1, descending=True).values[:, :k] if k <= min(chunk, V) else None),
    ])
    if not (isinstance(ids, torch.Tensor) and ids.dtype == torch.long and ids.shape == ref_i.shape):
        expect_tensor(ids, ref_i, _("ids"), atol=0, rtol=0, mistakes=id_mistakes)
    if exact:
        expect_tensor(ids, ref_i, _("ids (ties by lower id)"), atol=0, rtol=0, mistakes=id_mistakes)
    else:  # float32 real data: another summation order may swap nearly equal logits; each id must carry its value
        ok = bool(((ids >= 0) & (ids < V)).all())
        if ok:
            got = logits.gather(-1, ids)
            ok = bool(torch.allclose(got, values.double(), atol=tol, rtol=tol)) and all(
                len(set(r)) == k for r in ids.tolist())
        if not ok:
            expect_tensor(ids, ref_i, _("ids (each the id of its value, no id twice)"), atol=0, rtol=0,
                          mistakes=id_mistakes)
    if chunk < V:
        for name, shapes in calls:
            wide = next((s for s in shapes if len(s) >= 2 and s[-1] >= V and s[-1] > k + chunk
                         and s != list(W.shape)), None)
            if wide is not None:
                raise CheckFailed(_("right values, but {name} received a tensor of shape {wide}: a full row of "
                                    "V = {V} logits (or W.T, [d, V]) was formed. Work on W[start:start + chunk] "
                                    "({chunk} rows at a time) and keep only the best k candidates between chunks.",
                                    name=verbatim(name), wide=verbatim(wide), V=V, chunk=chunk))
