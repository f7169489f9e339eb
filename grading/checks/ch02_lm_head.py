"""Checks for chapter 02, the LM head (exercises/ch02_lm_head.py)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from .compare import CheckFailed, expect_equal, expect_float, expect_tensor, expect_that, expect_tuple
from .fixtures import CAT_PROMPT, course_ids, course_model, random_table, ranked_ids, token_id
from ..model import Case, Chapter, Exercise, Question

# ---------------------------------------------------------------- the real model's numbers


@lru_cache(maxsize=1)
def _cat_forward() -> tuple[torch.Tensor, torch.Tensor]:
    """(final-normed hidden states [T, d], the model's own logits [T, V]) for the cat prompt."""
    model, _ = course_model()
    with torch.no_grad():
        out = model(course_ids(CAT_PROMPT)[None], output_hidden_states=True)
    return out.hidden_states[-1][0], out.logits[0]


def _head_weight() -> torch.Tensor:
    return course_model()[0].lm_head.weight.detach()


# ---------------------------------------------------------------- lm_head_logits


def _real_head_inputs():
    return _cat_forward()[0].clone(), _head_weight()


LOGITS_INPUTS = {
    "one vector h [8], V=20": lambda: (random_table(1, 8, 21)[0], random_table(20, 8, 22), None),
    "T=5 positions [5, 16], V=40": lambda: (random_table(5, 16, 23), random_table(40, 16, 24), None),
    "a batch [2, 3, 8], V=11": lambda: (random_table(6, 8, 25).reshape(2, 3, 8), random_table(11, 8, 26), None),
    "a square head V = d = 6 (W and W.T differ)": lambda: (random_table(4, 6, 27), random_table(6, 6, 28), None),
    "with a bias b [30]": lambda: (random_table(4, 12, 29), random_table(30, 12, 30), random_table(1, 30, 31)[0]),
    "square head with a bias": lambda: (random_table(3, 5, 32), random_table(5, 5, 33), random_table(1, 5, 34)[0]),
    "float64 keeps float64": lambda: (random_table(3, 7, 35, torch.float64), random_table(9, 7, 36, torch.float64), None),
    "no positions, h [0, 8] -> [0, V]": lambda: (torch.zeros(0, 8), random_table(13, 8, 37), None),
    "the real head: final-normed states of 'The cat sat on the' [5, 576], W = lm_head.weight [49152, 576]":
        lambda: (*_real_head_inputs(), None),
}


def _logits_mistakes(h, W, b):
    plain = h.double() @ W.double().T
    if W.shape[0] == h.shape[-1]:
        yield ("you multiplied by W instead of W.T. W is stored as [V, d] (one row per token, like nn.Linear(d, V)."
               "weight), so the product is h @ W.T: each logit is h dotted with one ROW of W.",
               lambda: (h.double() @ W.double() + (0 if b is None else b.double())))
    if b is not None:
        yield ("you left out the bias: logits = h @ W.T + b.", plain)
        yield ("you subtracted the bias: logits = h @ W.T + b.", plain - b.double())
    full = plain + (0 if b is None else b.double())
    yield ("you applied softmax: the head returns logits (raw, unbounded scores), not probabilities.",
           lambda: torch.softmax(full, dim=-1))
    if h.dim() >= 2 and h.shape[-2] > 0:
        yield ("you kept only the last position. The head scores every position it is given; choosing the last "
               "one is the caller's business.", lambda: full[..., -1, :])


def _check_logits(out, inputs):
    h, W, b = inputs
    if W.shape == _head_weight().shape and h.shape == _cat_forward()[0].shape:
        expected = _cat_forward()[1]  # the model's own logits
        expect_tensor(out, expected, "logits vs model(ids).logits[0]", atol=1e-4, rtol=1e-4,
                      mistakes=list(_logits_mistakes(h, W, b)))
        with torch.no_grad():
            own_head = course_model()[0].lm_head(h)
        expect_tensor(out, own_head, "logits vs model.lm_head(h)", atol=1e-4, rtol=1e-4)
        return
    expected = F.linear(h.double(), W.double(), None if b is None else b.double()).to(h.dtype)
    tol = 1e-10 if h.dtype == torch.float64 else 1e-5
    expect_tensor(out, expected, "logits", atol=tol, rtol=1e-5, mistakes=list(_logits_mistakes(h, W, b)))


# ---------------------------------------------------------------- top_k_tokens


def _rounded_real_logits():
    return (_cat_forward()[1][-1] * 2).round() / 2  # many ties, like a coarse-precision model


TOPK_INPUTS = {
    "distinct values, V=10, k=3": lambda: (random_table(1, 10, 41)[0], 3),
    "ties: [1, 3, 3, 2, 3], k=2 -> ids [1, 2]": lambda: (torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 2),
    "k=1 with a tie for the maximum": lambda: (torch.tensor([0.5, 2.0, -1.0, 2.0]), 1),
    "all values equal, k=4": lambda: (torch.zeros(9), 4),
    "k = V: the whole vocabulary in order": lambda: (random_table(1, 12, 42)[0], 12),
    "k = 0: empty values and ids": lambda: (random_table(1, 6, 43)[0], 0),
    "masked logits with -inf, k reaches into them": lambda: (
        torch.tensor([0.3, float("-inf"), 1.2, float("-inf"), -0.7, float("-inf")]), 5),
    "negative logits only": lambda: (-random_table(1, 15, 44)[0].abs() - 1, 4),
    "bfloat16 logits with many ties, V=1000, k=50": lambda: (random_table(1, 1000, 45, torch.bfloat16)[0], 50),
    "the model's logits after 'The cat sat on the', k=12": lambda: (_cat_forward()[1][-1].clone(), 12),
    "the same logits rounded to 0.5 (ties), k=20": lambda: (_rounded_real_logits(), 20),
}


def _reference_topk(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = ranked_ids(logits)[:k]  # larger value first, equal values by increasing id
    return logits[ids], ids


def _check_topk(out, inputs):
    logits, k = inputs
    values, ids = _reference_topk(logits, k)
    got_values, got_ids = expect_tuple(out, 2, "(values, ids)")
    if (isinstance(got_values, torch.Tensor) and isinstance(got_ids, torch.Tensor) and logits.is_floating_point()
            and not got_values.is_floating_point() and got_ids.is_floating_point()):
        raise CheckFailed("you returned (ids, values): return (values, ids), like torch.topk.")
    probs = torch.softmax(logits.double(), dim=-1)
    ascending = torch.sort(logits, stable=True).indices[:k]  # the k smallest, equal values by increasing id
    everything = ranked_ids(logits)
    zero = [("k = 0 asks for no tokens: `k or len(logits)` (or `if not k`) treats 0 as 'all'. Slicing [:k] with "
             "k = 0 already gives empty tensors.", lambda: logits[everything])] if k == 0 else []
    expect_tensor(got_values, values, f"top-{k} values", atol=0, rtol=0, mistakes=zero + [
        ("you took the k SMALLEST values: sort in descending order.", lambda: logits[ascending]),
        ("you returned probabilities: the values asked for are the logits themselves.",
         lambda: probs[ids].to(logits.dtype)),
    ])
    if isinstance(got_ids, torch.Tensor) and got_ids.shape == ids.shape and not torch.equal(got_ids, ids):
        in_range = bool(((got_ids >= 0) & (got_ids < logits.shape[0])).all()) if got_ids.numel() else True
        if in_range and not got_ids.is_floating_point() and torch.equal(logits[got_ids.long()], values):
            first = int((got_ids != ids).nonzero()[0])
            raise CheckFailed(
                f"top-{k} ids: the values are right, but equal values must be listed by increasing id. "
                f"At position {first} you gave id {int(got_ids[first])}, expected {int(ids[first])} "
                f"(both have the value {float(values[first]):g}). torch.topk does not promise any order among "
                "ties; a stable descending sort does.")
    expect_tensor(got_ids, ids, f"top-{k} ids", atol=0, rtol=0, mistakes=[
        ("you took the ids of the k SMALLEST values: sort in descending order.", ascending),
    ])


# ---------------------------------------------------------------- lm_head_flops


FLOPS_INPUTS = {
    "course model, one position (default positions=1)": (576, 49152),
    "Qwen3-0.6B, one position (about 3.11e8)": (1024, 151936, 1),
    "Qwen3-0.6B, all 1000 positions of a prompt": (1024, 151936, 1000),
    "Qwen3.5-0.8B, one position": (1024, 248320, 1),
    "GPT-2 small, 1024 positions": (768, 50257, 1024),
    "the toy head d=512, V=100,000, 5 positions": (512, 100000, 5),
    "zero positions": (576, 49152, 0),
    "GPT-3-sized head, 2048 positions": (12288, 50257, 2048),
}


def _measured_flops(d: int, V: int, positions: int) -> int:
    """FLOPs PyTorch's own counter reports for [positions, d] @ [d, V], on the meta device (no memory)."""
    with FlopCounterMode(display=False) as counter:
        torch.empty(positions, d, device="meta") @ torch.empty(V, d, device="meta").T
    return int(counter.get_total_flops())


def _check_flops(out, inputs):
    d, V, positions = (*inputs, 1)[:3]
    expected = _measured_flops(d, V, positions)
    zero = [("positions = 0 is a valid count (no positions, no work): `positions or 1` treats 0 as 1. Test "
             "`is None` for a missing value, never truthiness.", 2 * d * V)] if positions == 0 else []
    expect_equal(out, expected, f"FLOPs of the head, d={d:,}, V={V:,}, positions={positions:,}", mistakes=zero + [
        ("you counted a multiply-add as one operation: it is two (one multiply, one add).", d * V * positions),
        ("you left out the positions: the cost grows with the number of positions scored.", 2 * d * V),
        ("you returned a float: return an exact int (use integer arithmetic).", float(expected)),
        ("you counted d - 1 additions per logit: the convention (PyTorch's FlopCounterMode, and the chapter) "
         "counts each multiply-add as 2, so 2 * d operations per logit.", (2 * d - 1) * V * positions),
    ])


# ---------------------------------------------------------------- logit_contributions


def _toy_pair(case: str):
    h = random_table(1, 8, 51)[0]
    unit = h / h.norm()
    other = random_table(1, 8, 52)[0]
    other = other - (other @ unit) * unit  # one Gram-Schmidt step: orthogonal to h
    w = {"aligned": unit, "orthogonal": other / other.norm(), "opposite": -unit}[case] * 1.5
    return h, w


def _real_pair(which: str):
    h_last = _cat_forward()[0][-1].clone()
    j = token_id(" cat") if which == "cat" else int(_cat_forward()[1][-1].argmin())
    return h_last, _head_weight()[j].clone()


CONTRIB_INPUTS = {
    "toy 8-d, aligned (|w| = 1.5, cos = 1)": lambda: _toy_pair("aligned"),
    "toy 8-d, orthogonal (cos = 0)": lambda: _toy_pair("orthogonal"),
    "toy 8-d, opposite (cos = -1)": lambda: _toy_pair("opposite"),
    "random 16-d pair, float64": lambda: (random_table(1, 16, 53, torch.float64)[0], random_table(1, 16, 54, torch.float64)[0]),
    "h is the zero vector (cos = 0.0 by convention)": lambda: (torch.zeros(5), random_table(1, 5, 55)[0]),
    "w is the zero vector (cos = 0.0 by convention)": lambda: (random_table(1, 5, 56)[0], torch.zeros(5)),
    "real: h_last of 'The cat sat on the' and the head row of ' cat'": lambda: _real_pair("cat"),
    "real: h_last and the row of the lowest-scoring token": lambda: _real_pair("lowest"),
}


def _check_contributions(out, inputs):
    h, w = inputs
    contributions, cos = expect_tuple(out, 2, "(contributions, cos)")
    hd, wd = h.double(), w.double()
    expected = (hd * wd).to(h.dtype)
    expect_tensor(contributions, expected, "per-dimension contributions h[i] * w[i]", atol=1e-6, rtol=1e-5, mistakes=[
        ("you returned a running (cumulative) sum: each entry is one dimension's product h[i] * w[i].",
         torch.cumsum(hd * wd, 0)),
        ("you normalised the vectors first: the contributions use h and w as they are (they sum to the logit).",
         lambda: (F.normalize(hd, dim=0) * F.normalize(wd, dim=0))),
    ])
    if h.shape[0] == 576:  # the real row: the contributions must add up to the model's own logit
        j = int((_head_weight() == w).all(dim=1).nonzero()[0])
        logit = float(_cat_forward()[1][-1, j])
        expect_float(float(contributions.double().sum()), logit, "sum of the contributions vs the model's logit",
                     atol=1e-3, rtol=1e-4)
    ref_cos = float(F.cosine_similarity(hd, wd, dim=0))
    dot = float(hd @ wd)
    wrong = [("you returned the dot product (the logit), not the cosine: divide by |h| |w|.", dot)]
    if -1 < ref_cos < 1 and hd.norm() > 0 and wd.norm() > 0:
        wrong += [
            ("you returned the angle in radians: the cosine is asked for.", float(np.arccos(ref_cos))),
            ("you returned the angle in degrees: the cosine is asked for.", float(np.degrees(np.arccos(ref_cos)))),
            ("you divided by |w| only: that is the length of h's projection on w, not the cosine.",
             dot / float(wd.norm())),
            ("you divided by |h| only: divide by |h| |w|.", dot / float(hd.norm())),
        ]
    expect_that(not isinstance(cos, torch.Tensor) or cos.numel() == 1,
                "cos: expected one number (a float), got a tensor of several values.")
    value = cos.item() if isinstance(cos, torch.Tensor) else cos
    expect_that(not (isinstance(value, float) and np.isnan(value)),
                "cos: you returned NaN. A zero vector has no direction, so |h| |w| = 0: return 0.0 in that case.")
    expect_float(cos, ref_cos, "cosine of the angle between h and w", atol=1e-5, rtol=1e-5, mistakes=wrong)


# ---------------------------------------------------------------- the chapter

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
    from .fixtures import course_embedding

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


CHAPTER = Chapter(
    number="02",
    module="ch02_lm_head",
    title="The LM head",
    exercises=[
        Exercise(
            "lm_head_logits", "h [..., d] and W [V, d] (+ optional bias [V]) -> logits [..., V]",
            [Case(n, m, _check_logits) for n, m in LOGITS_INPUTS.items()],
            hint="W holds one row per token, [V, d], like nn.Linear(d, V).weight. Every logit is h dotted with "
                 "a row, so multiply by W transposed; the @ operator broadcasts over the leading dimensions of h.",
            uses_course_model=True,
        ),
        Exercise(
            "top_k_tokens", "the k largest logits and their ids, descending, ties to the lower id",
            [Case(n, m, _check_topk) for n, m in TOPK_INPUTS.items()],
            hint="torch.topk makes no promise about the order of equal values. A stable sort keeps equal values in "
                 "their original (id) order: look at torch.sort's arguments. Return (values, ids), ids as int64.",
            uses_course_model=True,
        ),
        Exercise(
            "lm_head_flops", "operations of the head for some positions (a multiply-add counts 2)",
            [Case(n, (lambda v=v: v), _check_flops) for n, v in FLOPS_INPUTS.items()],
            hint="One logit is one dot product of length d: d multiplications and d additions. Count the logits.",
        ),
        Exercise(
            "logit_contributions", "per-dimension products h[i] * w[i] and the cosine of the angle",
            [Case(n, m, _check_contributions) for n, m in CONTRIB_INPUTS.items()],
            hint="The products sum to the logit <h, w>; the cosine is that sum divided by |h| |w|. Watch out for a "
                 "zero vector (return 0.0 there), and return cos as a Python float.",
            uses_course_model=True,
        ),
        Exercise(
            "topk_logits_chunked", "stretch: top-k of h @ W.T over vocabulary chunks, never forming [N, V] logits",
            [Case(n, m, _check_chunked, "record_ops") for n, m in CHUNKED_INPUTS.items()],
            hint="For start in range(0, V, chunk): logits = h @ W[start:start + chunk].T and their ids "
                 "torch.arange(start, start + c). Concatenate them with the best k so far and keep the best k again: "
                 "sort the candidates by id, then stably by value (descending), so equal values keep the lower id.",
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "A model has vocabulary size V and hidden size d. Its LM head weight, as nn.Linear stores it "
                    "(model.lm_head.weight), has shape:",
                 {"a": "[d, V]", "b": "[d, d]", "c": "[V, d]", "d": "[V, V]"},
                 "7eb10e8c912c3601f6e4",
                 "Reread 'The head is one matrix' in notebook 02."),
        Question(2, "What is row j of the LM head weight?",
                 {"a": "V numbers, one per vocabulary entry: how often each token followed token j in training",
                  "b": "a learned d-dimensional vector; token j's logit is its inner product with h",
                  "c": "a fixed random vector drawn at initialisation and never changed by training",
                  "d": "the hidden state the model produced the last time it emitted token j, kept as a cache"},
                 "b36d505eca3323aeb496",
                 "Reread 'Each logit is an inner product' in notebook 02."),
        Question(3, "To generate the token after a 1,000-token prompt, for how many positions must the prefill "
                    "compute the LM head?",
                 {"a": "1,000", "b": "1", "c": "999", "d": "none: the head is only used in training"},
                 "7701f4db7cee678b4ebc",
                 "Reread 'What the head costs' in notebook 02."),
        Question(4, "Which statement about logits is true?",
                 {"a": "they are probabilities, so each row of logits sums to 1",
                  "b": "they are cosines, so each one lies between -1 and 1",
                  "c": "they are never negative, since softmax needs positive inputs",
                  "d": "they are unbounded scores; softmax makes them probabilities"},
                 "85fd70791744a5249d46",
                 "Reread 'Logits are scores, probabilities sum to 1' in notebook 02."),
        Question(5, "Two tokens' head rows have the same length. Which token gets the higher logit?",
                 {"a": "the one whose row makes the smaller angle with h",
                  "b": "the one with the lower id",
                  "c": "the one whose row has the larger sum of entries",
                  "d": "neither: rows of equal length always get equal logits"},
                 "af57d9f3b001988a641b",
                 "Reread 'Each logit is an inner product' in notebook 02."),
        Question(6, "The course model's head is a 49,152 x 576 matrix. How many multiply-adds does it take to "
                    "compute the logits of ONE position?",
                 {"a": "49,152", "b": "331,776", "c": "28,311,552", "d": "14,155,776"},
                 "2711efd8589ed4912450",
                 "Reread 'What the head costs' in notebook 02: one inner product of length d per vocabulary row."),
    ],
)
