"""Checks for chapter 04, softmax and sampling (exercises/ch04_sampling.py).

References: float64 torch.softmax, transformers' own logits warpers (TemperatureLogitsWarper,
TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper, with their default min_tokens_to_keep=1),
torch.multinomial with an identically seeded generator, and model.generate(do_sample=False).
"""
from __future__ import annotations

from functools import lru_cache

import torch

from .compare import CheckFailed, expect_equal, expect_tensor, named_mistake, seeded
from .fixtures import CAT_PROMPT, cached_tiny_model, course_ids, course_model, random_ids, random_tensor
from ..worker.calls.ch04 import SAMPLE_SEEDS, STAT_DRAWS
from ..model import Case, Chapter, Exercise, Question

NEG_INF = float("-inf")
FIVE = [2.3, 1.5, 3.8, 0.5, 1.2]  # the chapter's worked example


# ---------------------------------------------------------------- inputs


def _ties(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Small integers as floats: many exactly equal logits."""
    return random_ids(4, shape, seed).float()


def _with_neg_inf(x: torch.Tensor, seed: int, share: float = 0.4) -> torch.Tensor:
    """Some entries set to -inf (tokens masked earlier); the first column always stays finite."""
    mask = torch.rand(x.shape, generator=seeded(seed)) < share
    mask[..., 0] = False
    return x.masked_fill(mask, NEG_INF)


def _crossing() -> torch.Tensor:
    """Probabilities [0.5, 0.3, 0.15, 0.05] as logits, shuffled: with p = 0.7 the token of 0.3 crosses p."""
    return torch.tensor([0.15, 0.5, 0.05, 0.3]).log()


@lru_cache(maxsize=1)
def _real_logits() -> torch.Tensor:
    """The course model's next-token logits after 'The cat sat on the', [V]."""
    with torch.no_grad():
        return course_model()[0](course_ids(CAT_PROMPT)[None]).logits[0, -1].clone()


def _real() -> torch.Tensor:
    return _real_logits().clone()


# ---------------------------------------------------------------- references


def _as_rows(fn, x: torch.Tensor) -> torch.Tensor:
    """Apply a warper (which wants [batch, V]) to logits of any shape [..., V]."""
    return fn(None, x.reshape(-1, x.shape[-1])).reshape(x.shape)


def _softmax64(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.softmax(x.double(), dim=dim)


def _removed_to_zero(x: torch.Tensor, filtered: torch.Tensor) -> torch.Tensor:
    """The filter's result with removed entries set to 0 instead of -inf."""
    return filtered.masked_fill(torch.isinf(filtered) & ~torch.isinf(x), 0.0)


def _check_filter(out, x: torch.Tensor, expected: torch.Tensor, ambiguous: torch.Tensor, what: str, mistakes) -> None:
    """`out` must equal `expected`; where `ambiguous` (a tie or a float rounding at the threshold), either
    keeping the logit or removing it is accepted."""
    mistakes = list(mistakes)
    if isinstance(out, torch.Tensor) and out.shape == expected.shape and out.dtype == expected.dtype:
        rows = out.reshape(-1, out.shape[-1])
        had = torch.isfinite(x.reshape(-1, x.shape[-1])).any(-1)
        empty = had & ~torch.isfinite(rows).any(-1)
        if bool(empty.any()):
            raise CheckFailed(f"{what}: row {int(empty.nonzero()[0])} (of the input flattened to rows) has no token "
                              "left; a filter must always keep at least the most likely token.")
        either = ambiguous & ((out == x) | (out == NEG_INF))
        expected = torch.where(either, out, expected)
    expect_tensor(out, expected, what, atol=0, rtol=0, mistakes=mistakes)


# ---------------------------------------------------------------- softmax


SOFTMAX_INPUTS = {
    "the chapter's five logits [2.3, 1.5, 3.8, 0.5, 1.2]": lambda: (torch.tensor(FIVE), -1),
    "the four-word toy: logits [2, 1, 1, 0]": lambda: (torch.tensor([2.0, 1.0, 1.0, 0.0]), -1),
    "a batch [4, 10], dim=-1": lambda: (random_tensor((4, 10), 1, 3.0), -1),
    "dim=0 of a [6, 3] tensor": lambda: (random_tensor((6, 3), 2), 0),
    "3-D [2, 3, 5], dim=1": lambda: (random_tensor((2, 3, 5), 3), 1),
    "huge logits [1000, 999, 990, 0] (exp(1000) overflows)": lambda: (torch.tensor([[1000.0, 999.0, 990.0, 0.0]]), -1),
    "very negative logits [-1000, -1001, -1010] (exp underflows to 0)": lambda: (torch.tensor([-1000.0, -1001.0, -1010.0]), -1),
    "rows on very different scales [[1000, 999], [0, -1]]": lambda: (torch.tensor([[1000.0, 999.0], [0.0, -1.0]]), -1),
    "-inf entries (masked tokens get probability 0)": lambda: (_with_neg_inf(random_tensor((3, 8), 4), 5), -1),
    "float64 keeps float64": lambda: (random_tensor((2, 7), 6, dtype=torch.float64), -1),
    "float16 [4, 64] (scale 4): accumulated in float32, returned as float16": lambda: (
        random_tensor((4, 64), 70, 4.0, torch.float16), -1),
    "bfloat16 [3, 200] (scale 4), dim=-1": lambda: (random_tensor((3, 200), 71, 4.0, torch.bfloat16), -1),
    "bfloat16 [6, 5], dim=0": lambda: (random_tensor((6, 5), 72, 3.0, torch.bfloat16), 0),
    "a zero-size dimension [2, 0] -> an empty [2, 0], like torch.softmax": lambda: (torch.zeros(2, 0), -1),
    "an empty vector [0]": lambda: (torch.zeros(0), -1),
    "[0, 3] along dim=0 (zero-size)": lambda: (torch.zeros(0, 3), 0),
    "the course model's next-token logits [49152]": lambda: (_real(), -1),
}

# float16/bfloat16: torch.softmax accumulates in float32, so its result is the exact one rounded to the dtype;
# one unit in the last place (relative 2**-10 and 2**-7; float16 subnormals below 2**-14 step by 2**-24) is allowed.
HALF_TOLERANCE = {torch.float16: dict(atol=2.0 ** -24, rtol=2.0 ** -10), torch.bfloat16: dict(atol=0.0, rtol=2.0 ** -7)}


def _check_softmax(out, inputs):
    x, dim = inputs
    expected = _softmax64(x, dim).to(x.dtype)
    tol = (dict(atol=1e-12, rtol=1e-9) if x.dtype == torch.float64 else HALF_TOLERANCE.get(x.dtype)
           or dict(atol=1e-7, rtol=1e-4))

    def naive():
        e = x.exp()
        return e / e.sum(dim=dim, keepdim=True)

    def naive_half():
        e = (x - x.amax(dim=dim, keepdim=True)).exp()
        return e / e.sum(dim=dim, keepdim=True)

    def global_shift():
        e = (x - x.max()).exp()
        return e / e.sum(dim=dim, keepdim=True)

    mistakes = [
        ("softmax without the max shift: exp of a large logit overflows to inf (or every exp underflows to 0), "
         "and inf/inf or 0/0 is NaN. Subtract the max along `dim` first; it does not change the result.", naive),
        ("you subtracted the max of the whole tensor, not the max along `dim`: a row far below the global max "
         "underflows to 0/0. Use amax(dim=dim, keepdim=True).", global_shift),
        ("you normalised over the whole tensor instead of along `dim` (sum(dim=dim, keepdim=True)).",
         lambda: (x - x.max()).exp() / (x - x.max()).exp().sum()),
    ]
    if x.dim() > 1:
        other = 0 if dim in (-1, x.dim() - 1) else -1
        mistakes.append((f"you normalised along dim={other} instead of dim={dim}.", lambda: _softmax64(x, other).to(x.dtype)))
    if x.dtype in HALF_TOLERANCE:
        mistakes.insert(0, (f"you computed in {x.dtype} itself: the shift, exp and division each round to "
                            f"{x.dtype}, several units in the last place off. Accumulate in float32 as torch.softmax "
                            "does (x.float()), then cast the result back with .to(logits.dtype).", naive_half))
    expect_tensor(out, expected, "softmax", **tol, mistakes=mistakes)


# ---------------------------------------------------------------- temperature


TEMPERATURE_INPUTS = {
    "the five logits at T = 0.5 (sharper)": lambda: (torch.tensor(FIVE), 0.5),
    "the five logits at T = 1.5 (flatter)": lambda: (torch.tensor(FIVE), 1.5),
    "T = 1 changes nothing": lambda: (torch.tensor(FIVE), 1.0),
    "a batch [3, 20] at T = 0.7": lambda: (random_tensor((3, 20), 7, 2.0), 0.7),
    "-inf entries stay -inf, T = 2": lambda: (_with_neg_inf(random_tensor((2, 9), 8), 9), 2.0),
    "an integer temperature 3": lambda: (random_tensor((4,), 10), 3),
    "huge logits at T = 0.01": lambda: (torch.tensor([1e4, -1e4, 0.0]), 0.01),
    "float64 keeps float64": lambda: (random_tensor((2, 5), 11, dtype=torch.float64), 0.8),
}


def _check_temperature(out, inputs):
    from transformers.generation.logits_process import TemperatureLogitsWarper

    x, t = inputs
    expected = TemperatureLogitsWarper(float(t))(None, x)
    expect_tensor(out, expected, f"logits at temperature {t}", atol=0, rtol=1e-6, mistakes=[
        ("you multiplied by the temperature; divide the logits by it (T < 1 must sharpen).", lambda: x * t),
        ("you applied the temperature after softmax and returned probabilities / T. Temperature divides the "
         "logits BEFORE softmax; dividing probabilities by T changes nothing once they are renormalised.",
         lambda: _softmax64(x).to(x.dtype) / t),
        ("you returned probabilities softmax(logits / T); this function returns the scaled logits.",
         lambda: _softmax64(x / t).to(x.dtype)),
    ])


def _check_raises(out, inputs):
    if not isinstance(out, dict) or not isinstance(out.get("raised"), bool):
        raise RuntimeError("internal: the call did not report whether a ValueError was raised.")
    if out["raised"]:
        return
    got = out.get("returned", "")
    t = inputs[1]
    if t != t:
        raise CheckFailed(f"temperature NaN: expected a ValueError, got {got}. NaN compares False with everything, "
                          "so `if temperature <= 0: raise` lets it through and every logit becomes NaN. Test the "
                          "condition you want to hold: `if not temperature > 0: raise ValueError(...)`.")
    raise CheckFailed(f"temperature {t}: expected a ValueError, got {got}. A temperature must be > 0 "
                      "(temperature 0 means greedy, which is handled before any division).")


# ---------------------------------------------------------------- top-k


def _top_k_inputs():
    return {
        "the five logits, k = 3": lambda: (torch.tensor(FIVE), 3),
        "a batch [4, 50], k = 5": lambda: (random_tensor((4, 50), 12, 2.0), 5),
        "ties at the k-th value, [3, 12], k = 2": lambda: (_ties((3, 12), 13), 2),
        "k = 1 with a tie at the top": lambda: (torch.tensor([[1.0, 3.0, 3.0, 0.5], [2.0, 1.0, 0.0, -1.0]]), 1),
        "k = V keeps everything": lambda: (random_tensor((2, 10), 14), 10),
        "k > V keeps everything": lambda: (random_tensor((2, 10), 15), 17),
        "-inf entries, k larger than the finite count in some rows": lambda: (_with_neg_inf(random_tensor((3, 20), 16), 17, 0.6), 12),
        "1-D logits [30], k = 4": lambda: (random_tensor((30,), 18), 4),
        "3-D logits [2, 3, 16], k = 3": lambda: (random_tensor((2, 3, 16), 19), 3),
        "huge logits (scale 1e4), k = 10": lambda: (random_tensor((2, 40), 20, 1e4), 10),
        "float64, k = 6": lambda: (random_tensor((2, 25), 21, dtype=torch.float64), 6),
        "the course model's logits, k = 50": lambda: (_real(), 50),
    }


def _check_top_k(out, inputs):
    from transformers.generation.logits_process import TopKLogitsWarper

    x, k = inputs
    expected = _as_rows(TopKLogitsWarper(top_k=k), x)

    def exactly_k():
        kk = min(k, x.shape[-1])
        top = torch.topk(x, kk, dim=-1)
        return torch.full_like(x, NEG_INF).scatter(-1, top.indices, top.values)

    mistakes = [("ties at the k-th value: transformers keeps EVERY token whose logit equals the k-th largest "
                 "(compare with the k-th value, logits < kth), so a tie can keep more than k tokens.", exactly_k),
                ("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax.",
                 lambda: _removed_to_zero(x, expected))]
    for kk, word in ((k + 1, "k + 1"), (k - 1, "k - 1")):
        if kk >= 1:
            mistakes.append((f"an off-by-one: you kept {word} tokens.", lambda kk=kk: _as_rows(TopKLogitsWarper(top_k=kk), x)))
    if x.dim() > 1:
        def whole_tensor():
            kth = torch.topk(x.flatten(), min(k, x.numel())).values[-1]
            return x.masked_fill(x < kth, NEG_INF)

        mistakes.append(("you took the k largest of the whole tensor: top-k works per row (dim=-1), and every row "
                         "keeps its own k tokens.", whole_tensor))
    _check_filter(out, x, expected, torch.zeros_like(x, dtype=torch.bool), f"top-{k} filter", mistakes)


# ---------------------------------------------------------------- top-p


def _top_p_inputs():
    return {
        "the five logits, p = 0.9 (keeps three)": lambda: (torch.tensor(FIVE), 0.9),
        "probabilities [0.15, 0.5, 0.05, 0.3], p = 0.7 (the 0.3 token crosses p)": lambda: (_crossing(), 0.7),
        "a batch [4, 50], p = 0.8": lambda: (random_tensor((4, 50), 22, 2.0), 0.8),
        "p = 1.0 keeps everything": lambda: (random_tensor((3, 30), 23), 1.0),
        "p = 0.01 keeps only the top token": lambda: (random_tensor((3, 30), 24), 0.01),
        "p = 0 still keeps the top token, [8, 30]": lambda: (random_tensor((8, 30), 60, 0.5), 0.0),
        "p = 0 on the five logits": lambda: (torch.tensor(FIVE), 0.0),
        "p = 1e-6, float64, [4, 30]": lambda: (random_tensor((4, 30), 61, 0.3, torch.float64), 1e-6),
        "ties, [3, 12], p = 0.5": lambda: (_ties((3, 12), 25), 0.5),
        "-inf entries, p = 0.9": lambda: (_with_neg_inf(random_tensor((3, 20), 26), 27), 0.9),
        "huge logits (scale 1e3), p = 0.95": lambda: (random_tensor((2, 40), 28, 1e3), 0.95),
        "1-D logits [30], p = 0.6": lambda: (random_tensor((30,), 29), 0.6),
        "3-D logits [2, 3, 16], p = 0.75": lambda: (random_tensor((2, 3, 16), 30, 1.5), 0.75),
        "float64, p = 0.85": lambda: (random_tensor((2, 25), 31, dtype=torch.float64), 0.85),
        "the course model's logits, p = 0.9": lambda: (_real(), 0.9),
        "probabilities [0.4, 0.2, 0.2, 0.2], p = 0.5: one of the three tied tokens must stay (kept mass 0.6)":
            lambda: (torch.tensor([0.4, 0.2, 0.2, 0.2]).log(), 0.5),
        "tied groups at the cut in a batch [2, 6], p = 0.55": lambda: (
            torch.tensor([[0.1, 0.3, 0.15, 0.15, 0.15, 0.15], [0.25, 0.25, 0.25, 0.25, 0.0, 0.0]]).log(), 0.55),
    }


def _top_p_ambiguous(x: torch.Tensor, p: float, tol: float = 1e-5) -> torch.Tensor:
    """Tokens that may be kept or removed: a tie or float rounding decides at the threshold.

    transformers removes a token when the mass of itself and every token sorted below it is <= 1 - p.
    With ties that mass depends on the order among equal logits, so it is a range, computed in float64.
    """
    rows = x.reshape(-1, x.shape[-1]).double()
    probs = torch.softmax(rows, -1)
    values, order = rows.sort(-1)
    cum = probs.gather(-1, order).cumsum(-1)
    lo = torch.searchsorted(values, rows, right=False)
    hi = torch.searchsorted(values, rows, right=True)
    zero = torch.zeros(rows.shape[0], 1, dtype=cum.dtype)
    cum0 = torch.cat([zero, cum], -1)
    least = cum0.gather(-1, lo) + probs  # this token sorted first among its ties
    most = cum0.gather(-1, hi)  # ... or last
    t = 1 - p
    ambiguous = ~((most <= t - tol) | (least > t + tol))
    top_group = hi == rows.shape[-1]
    n_top = top_group.sum(-1, keepdim=True)
    ambiguous &= ~(top_group & (n_top == 1))  # a single top token is always kept
    ambiguous &= torch.isfinite(rows)
    return ambiguous.reshape(x.shape)


def _top_p_dropping_crossing(x: torch.Tensor, p: float, keep_first: bool) -> torch.Tensor:
    probs, order = _softmax64(x).sort(-1, descending=True)
    drop = probs.cumsum(-1) > p
    if keep_first:
        drop[..., 0] = False
    return x.masked_fill(drop.scatter(-1, order, drop), NEG_INF)


def _top_p_from_probs(x: torch.Tensor, probs: torch.Tensor, p: float) -> torch.Tensor:
    """transformers' top-p rule applied with the given probabilities (to build wrong variants)."""
    sorted_probs, order = probs.sort(-1)
    drop = sorted_probs.cumsum(-1) <= 1 - p
    drop[..., -1] = False
    return x.masked_fill(drop.scatter(-1, order, drop), NEG_INF)


def _check_top_p(out, inputs):
    from transformers.generation.logits_process import TopPLogitsWarper

    x, p = inputs
    expected = _as_rows(TopPLogitsWarper(top_p=p), x)
    mistakes = [
        ("top-p that drops the token crossing the threshold: keep tokens, most likely first, until the kept mass "
         "REACHES p, including the token that takes it past p (p = 0.9 on the chapter's five logits keeps three).",
         lambda: _top_p_dropping_crossing(x, p, True)),
        ("top-p that drops the token crossing the threshold (and so may remove every token): keep tokens until the "
         "kept mass reaches p, including the one that crosses it.", lambda: _top_p_dropping_crossing(x, p, False)),
        ("you returned the logits in sorted order; scatter the mask back to the original token positions.",
         lambda: expected.sort(-1, descending=True).values),
        ("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax.",
         lambda: _removed_to_zero(x, expected)),
    ]
    if x.dim() > 1 and x.shape[0] > 1:
        mistakes.append(("softmax over the wrong dimension: a row's probabilities are softmax(logits, dim=-1).",
                         lambda: _top_p_from_probs(x, _softmax64(x, 0), p)))
    if p == 0:
        mistakes.insert(0, ("p = 0 keeps only the top token: `if not p` (or `p or 1.0`) treats 0.0 as 'no filter'. "
                            "Compare with None when you mean 'not given'.", x))
    ambiguous = _top_p_ambiguous(x, p)
    _check_kept_mass(out, x, expected, ambiguous, p)
    _check_filter(out, x, expected, ambiguous, f"top-p filter (p = {p})", mistakes)


def _check_kept_mass(out, x: torch.Tensor, expected: torch.Tensor, ambiguous: torch.Tensor, p: float,
                     tol: float = 1e-5) -> None:
    """Where ties (or rounding) leave a choice at the cut, the kept set must still be transformers' set up to the
    order among equal logits: its mass reaches p, and it stops there (dropping its least likely token would
    leave less than p)."""
    if not (isinstance(out, torch.Tensor) and out.shape == x.shape and out.dtype == x.dtype) or not bool(ambiguous.any()):
        return
    rows, exp_rows = out.reshape(-1, x.shape[-1]), expected.reshape(-1, x.shape[-1])
    amb, probs = ambiguous.reshape(rows.shape), _softmax64(x).reshape(rows.shape)
    for r in range(rows.shape[0]):
        fixed = ~amb[r]
        if not amb[r].any() or not torch.equal(torch.isfinite(rows[r])[fixed], torch.isfinite(exp_rows[r])[fixed]):
            continue  # nothing to choose in this row, or other differences that the comparison below explains
        kept = torch.isfinite(rows[r]) & torch.isfinite(x.reshape(rows.shape)[r])
        mass = float(probs[r][kept].sum())
        if mass < p - tol and bool(kept.any()):
            raise CheckFailed(
                f"top-p filter (p = {p}), row {r}: the kept tokens' probability mass is {mass:.4f}, below p. Tokens "
                "tied at the cut must not all be removed together: keep them one by one, most likely first (any "
                "order among equal logits), until the kept mass reaches p, as transformers does after its sort.")
        if int(kept.sum()) > 1 and mass - float(probs[r][kept].min()) >= p + tol:
            raise CheckFailed(
                f"top-p filter (p = {p}), row {r}: you kept mass {mass:.4f}, more than needed: without its least "
                "likely token the kept set would still reach p. With tokens tied at the cut, keep only as many of "
                "them as it takes to reach p (transformers keeps the first ones of its sort order).")


# ---------------------------------------------------------------- min-p


def _min_p_inputs():
    return {
        "the five logits, min_p = 0.1": lambda: (torch.tensor(FIVE), 0.1),
        "a batch [4, 50], min_p = 0.05": lambda: (random_tensor((4, 50), 32, 2.0), 0.05),
        "min_p = 0 keeps everything": lambda: (random_tensor((2, 20), 33), 0.0),
        "min_p = 1 keeps only the top token(s), ties kept": lambda: (_ties((3, 12), 34), 1.0),
        "-inf entries, min_p = 0.2": lambda: (_with_neg_inf(random_tensor((3, 20), 35), 36), 0.2),
        "huge logits (scale 1e3), min_p = 0.01": lambda: (random_tensor((2, 40), 37, 1e3), 0.01),
        "1-D logits [30], min_p = 0.3": lambda: (random_tensor((30,), 38), 0.3),
        "3-D logits [2, 3, 16], min_p = 0.15": lambda: (random_tensor((2, 3, 16), 39, 1.5), 0.15),
        "float64, min_p = 0.1": lambda: (random_tensor((2, 25), 40, dtype=torch.float64), 0.1),
        "the course model's logits, min_p = 0.1": lambda: (_real(), 0.1),
    }


def _check_min_p(out, inputs):
    from transformers.generation.logits_process import MinPLogitsWarper

    x, min_p = inputs
    expected = _as_rows(MinPLogitsWarper(min_p=min_p), x)
    probs = _softmax64(x)
    threshold = min_p * probs.amax(-1, keepdim=True)
    top = x == x.amax(-1, keepdim=True)  # always kept, ties included
    ambiguous = ((probs - threshold).abs() <= 1e-6 * threshold) & torch.isfinite(x) & ~top
    absolute = ("you compared the probabilities with min_p itself; min-p scales the threshold by the top token's "
                "probability: keep p_i >= min_p * max_j p_j.")
    _check_filter(out, x, expected, ambiguous, f"min-p filter (min_p = {min_p})", [
        (absolute, lambda: x.masked_fill((probs < min_p) & ~top, NEG_INF)),
        (absolute, lambda: x.masked_fill(probs < min_p, NEG_INF)),
        ("you compared logits with min_p * (the largest logit); the rule is on probabilities: "
         "p_i >= min_p * p_max, i.e. logit_i >= max logit + log(min_p).",
         lambda: x.masked_fill(x < min_p * x.amax(-1, keepdim=True), NEG_INF)),
        ("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax.",
         lambda: _removed_to_zero(x, expected)),
        ("your probabilities overflowed: exp of a large logit without the max shift is inf, inf / inf is NaN, and "
         "NaN < threshold is False, so nothing was removed. Use the stable softmax (subtract the row max).",
         lambda: x if not bool(torch.isfinite(x.exp().sum(-1)).all()) else None),
        ("you scaled min_p by the top probability of the whole tensor; each row uses its own top probability "
         "(amax(dim=-1, keepdim=True)).", lambda: x.masked_fill(probs < min_p * probs.max(), NEG_INF)),
    ])


# ---------------------------------------------------------------- sample_next_token


def _pipeline(logits: torch.Tensor, temperature: float, top_k, top_p, *, order=("t", "k", "p"),
              crossing_bug: bool = False) -> torch.Tensor:
    """Probabilities [V] after transformers' warpers in `order` (t = temperature, k = top-k, p = top-p)."""
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    x = logits.reshape(1, -1)
    for step in order:
        if step == "t" and temperature != 1:
            x = TemperatureLogitsWarper(float(temperature))(None, x)
        elif step == "k" and top_k is not None:
            x = TopKLogitsWarper(top_k=top_k)(None, x)
        elif step == "p" and top_p is not None:
            x = _top_p_dropping_crossing(x, top_p, True) if crossing_bug else TopPLogitsWarper(top_p=top_p)(None, x)
    return torch.softmax(x, -1)[0]


def _draw(probs: torch.Tensor, seed: int | None, gen: torch.Generator | None = None) -> int:
    gen = gen if gen is not None else torch.Generator().manual_seed(seed)
    return int(torch.multinomial(probs, 1, generator=gen))


def _alternatives(logits, t, k, p):
    """(explanation, probabilities) of the usual wrong pipelines that differ from the right one here."""
    alts = []
    if t != 1:
        alts.append(("the temperature had no effect: it must divide the logits BEFORE softmax (applied after "
                     "softmax, or to the probabilities, it changes nothing once they are renormalised).",
                     _pipeline(logits, 1.0, k, p)))
        alts.append(("you multiplied the logits by the temperature; divide them by it.",
                     _pipeline(logits, 1.0 / t, k, p)))
    if p is not None:
        alts.append(("top-p dropped the token crossing the threshold: keep tokens until the kept mass reaches p, "
                     "including the one that takes it past p.", _pipeline(logits, t, k, p, crossing_bug=True)))
        alts.append(("top_p = 0.0 was treated as 'no top-p' (`if top_p:` is False for 0.0): test `top_p is not None`; "
                     "p = 0 keeps only the top token." if p == 0 else
                     "top-p ignored: apply top-p after temperature and top-k.", _pipeline(logits, t, k, None)))
    if k is not None:
        alts.append(("top-k ignored: apply top-k after temperature.", _pipeline(logits, t, None, p)))
    if k is not None and p is not None:
        alts.append(("top-p before top-k: transformers applies temperature, then top-k, then top-p.",
                     _pipeline(logits, t, k, p, order=("t", "p", "k"))))
    if t != 1 and (k is not None or p is not None):
        alts.append(("filters before temperature: transformers divides by the temperature first, then filters.",
                     _pipeline(logits, t, k, p, order=("k", "p", "t"))))
    right = _pipeline(logits, t, k, p)
    merged: list[tuple[str, torch.Tensor]] = []  # mistakes that give the same probabilities here are named together
    for e, q in alts:
        if torch.allclose(q, right, atol=1e-4):
            continue
        same = next((i for i, (_, q2) in enumerate(merged) if torch.allclose(q, q2, atol=1e-6)), None)
        if same is None:
            merged.append((e, q))
        else:
            merged[same] = (merged[same][0] + " Or: " + e, merged[same][1])
    return merged


def _int_list(out, what: str) -> list[int]:
    if not isinstance(out, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in out):
        bad = next((v for v in (out if isinstance(out, list) else [out])
                    if not (isinstance(v, int) and not isinstance(v, bool))), out)
        raise CheckFailed(f"{what}: sample_next_token must return a Python int (a token id), got "
                          f"{type(bad).__name__} {bad!r}. Use int(...) or .item() on a one-element tensor.")
    return out


SAMPLE_INPUTS = {
    "the five logits, T = 1, seeds 0..29": lambda: (torch.tensor(FIVE), 1.0, None, None),
    "V = 20, T = 0.7, top_k = 5, seeds 0..29": lambda: (random_tensor((20,), 41, 2.0), 0.7, 5, None),
    "V = 20, T = 1.3, top_p = 0.9, seeds 0..29": lambda: (random_tensor((20,), 42, 2.0), 1.3, None, 0.9),
    "V = 50, T = 0.8, top_k = 10, top_p = 0.8, seeds 0..29": lambda: (random_tensor((50,), 43, 2.0), 0.8, 10, 0.8),
    "the five logits, T = 2.0, top_p = 0.9, seeds 0..29": lambda: (torch.tensor(FIVE), 2.0, None, 0.9),
    "the course model's logits, T = 0.8, top_p = 0.9, seeds 0..9": lambda: (_real(), 0.8, None, 0.9),
    "V = 20, T = 1.0, top_p = 0.0 (only the top token), seeds 0..29": lambda: (random_tensor((20,), 48, 1.0), 1.0, None, 0.0),
}


def _check_seeded(out, inputs):
    logits, t, k, p = inputs
    draws, again = _int_list(out["draws"], "draw"), _int_list(out["again"], "draw")
    if draws[:3] != again:
        raise CheckFailed(f"the same seed gave different tokens ({draws[:3]} then {again}). Pass the generator "
                          "on: torch.multinomial(probs, 1, generator=generator).")
    seeds = SAMPLE_SEEDS[:len(draws)]
    probs = _pipeline(logits, t, k, p)
    expected = [_draw(probs, s) for s in seeds]
    if draws == expected:
        return
    i = next(i for i, (a, b) in enumerate(zip(draws, expected)) if a != b)
    msg = (f"with seed {seeds[i]}: expected token {expected[i]}, got {draws[i]} "
           f"({sum(a != b for a, b in zip(draws, expected))} of {len(draws)} draws differ). The judge divides by "
           "the temperature, applies top-k, then top-p (transformers' warpers), takes softmax over the whole "
           "vocabulary and draws torch.multinomial(probs, 1, generator=generator).")
    if 0 <= draws[i] < probs.numel() and float(probs[draws[i]]) == 0.0:
        msg += f" Token {draws[i]} has probability 0 after filtering: it should never be drawn."
    mistakes = [(e, lambda q=q: [_draw(q, s) for s in seeds]) for e, q in _alternatives(logits, t, k, p)]
    mistakes.append(("you drew from the kept tokens only (a shorter probability vector consumes different random "
                     "numbers). Pass the full [V] probabilities, zeros included, to torch.multinomial.",
                     lambda: _draws_from_kept(probs, seeds)))
    explanation = named_mistake(draws, mistakes)
    if not explanation:
        explanation = ("\n  If the frequency cases pass, your sampler has the right distribution but draws differently:"
                       " use torch.multinomial(probs, 1, generator=generator) on the full-vocabulary probabilities.")
    raise CheckFailed(msg + explanation)


def _draws_from_kept(probs: torch.Tensor, seeds) -> list[int]:
    kept = probs.nonzero().flatten()
    return [int(kept[_draw(probs[kept], s)]) for s in seeds]


def _check_one_generator(out, inputs):
    logits, t, k, p = inputs
    draws = _int_list(out["draws"], "draw")
    gen = torch.Generator().manual_seed(123)
    probs = _pipeline(logits, t, k, p)
    expected = [_draw(probs, None, gen) for _ in range(30)]
    if draws != expected:
        i = next(i for i, (a, b) in enumerate(zip(draws, expected)) if a != b)
        raise CheckFailed(f"30 draws from one generator (seed 123): draw {i} should be token {expected[i]}, got "
                          f"{draws[i]}. Each call must take exactly one torch.multinomial(probs, 1, generator=generator)"
                          " draw from the generator it is given, and nothing else from it.")


def _check_greedy_t0(out, inputs):
    rows = inputs[0]
    draws = _int_list(out["draws"], "draw")
    expected = [int(r.argmax()) for r in rows]
    expect_equal(draws, expected, "temperature 0 must return the argmax of each logit vector", mistakes=[])


def _check_t0_interleaved(out, inputs):
    rows = inputs[0]
    draws = _int_list(out["draws"], "draw")
    gen, consuming = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    expected, if_t0_draws = [], []
    for r in rows:
        probs = torch.softmax(r, -1)
        expected += [int(r.argmax()), _draw(probs, None, gen)]
        _draw(torch.nn.functional.one_hot(r.argmax(), r.numel()).float(), None, consuming)  # the wrong extra draw
        if_t0_draws += [int(r.argmax()), _draw(probs, None, consuming)]
    if len(draws) != len(expected):
        raise CheckFailed(f"expected {len(expected)} draws, got {len(draws)}.")
    for i, (got, want) in enumerate(zip(draws, expected)):
        if got != want:
            kind = "temperature 0 (the argmax)" if i % 2 == 0 else "temperature 1"
            msg = (f"one generator (seed 7), calls alternating temperature 0 and temperature 1: call {i} "
                   f"({kind}) should give token {want}, got {got}.")
            if i % 2 == 1 and draws[::2] == expected[::2] and draws[:i + 1] == if_t0_draws[:i + 1]:
                msg += ("\n  Likely mistake: the temperature-0 calls returned the argmax but also drew from the "
                        "generator, which shifts every later draw. At temperature 0 return int(logits.argmax()) "
                        "before anything touches the generator: greedy must not draw.")
            raise CheckFailed(msg)


STAT_INPUTS = {
    f"{STAT_DRAWS:,} draws, V = 8, T = 0.7, top_k = 6, top_p = 0.9: frequencies vs probabilities":
        lambda: (random_tensor((8,), 44, 1.5), 0.7, 6, 0.9),
    f"{STAT_DRAWS:,} draws, V = 6, T = 2.0, no filters: frequencies vs probabilities":
        lambda: (random_tensor((6,), 45, 2.0), 2.0, None, None),
    f"{STAT_DRAWS:,} draws, the five logits, T = 1, top_p = 0.9: frequencies vs probabilities":
        lambda: (torch.tensor(FIVE), 1.0, None, 0.9),
}


def _chi_square(counts: torch.Tensor, probs: torch.Tensor) -> tuple[float, int, float]:
    """(statistic, degrees of freedom, p-value) of counts against probabilities; p = 0 if a 0-probability
    token was drawn."""
    from scipy.stats import chi2

    n = float(counts.sum())
    if bool((counts[probs == 0] > 0).any()):
        return float("inf"), 0, 0.0
    support = probs > 0
    if int(support.sum()) < 2:
        return 0.0, 0, 1.0
    expected = n * probs[support].double()
    stat = float(((counts[support].double() - expected) ** 2 / expected).sum())
    dof = int(support.sum()) - 1
    return stat, dof, float(chi2.sf(stat, dof))


def _check_frequencies(out, inputs):
    logits, t, k, p = inputs
    draws = _int_list(out["draws"], "draw")
    V = logits.numel()
    if any(not 0 <= d < V for d in draws):
        raise CheckFailed(f"a draw is outside [0, {V}): {next(d for d in draws if not 0 <= d < V)}.")
    counts = torch.bincount(torch.tensor(draws), minlength=V)
    probs = _pipeline(logits, t, k, p)
    stat, dof, pvalue = _chi_square(counts, probs)
    if pvalue >= 1e-4:
        return
    freq = ", ".join(f"{c / len(draws):.3f}" for c in counts.tolist())
    want = ", ".join(f"{q:.3f}" for q in probs.tolist())
    if dof == 0 and stat == float("inf"):
        z = int(((counts > 0) & (probs == 0)).nonzero()[0])
        head = f"token {z} was drawn {int(counts[z])} times but has probability 0 after filtering."
    else:
        head = f"the frequencies do not follow the probabilities: chi-square {stat:.1f} with {dof} dof (p = {pvalue:.2g})."
    msg = f"{head}\n  expected probabilities [{want}]\n  your frequencies      [{freq}]"
    for explanation, q in _alternatives(logits, t, k, p):
        if _chi_square(counts, q)[2] >= 1e-3:
            msg += f"\n  Likely mistake: {explanation}"
            break
    raise CheckFailed(msg)


# ---------------------------------------------------------------- greedy_generate


GREEDY_INPUTS = {
    "tiny random Llama (V=128, d=32, 2 layers), a prompt of 6 tokens, 8 new tokens":
        lambda: (cached_tiny_model("llama", 0), random_ids(128, (1, 6), 50), 8),
    "tiny random Qwen3, a batch of 2 prompts of 5 tokens, 6 new tokens":
        lambda: (cached_tiny_model("qwen3", 1), random_ids(128, (2, 5), 51), 6),
    "tiny random GPT-2, a 1-token prompt, 10 new tokens":
        lambda: (cached_tiny_model("gpt2", 2), random_ids(128, (1, 1), 52), 10),
    "max_new_tokens = 0 returns the prompt": lambda: (cached_tiny_model("llama", 0), random_ids(128, (1, 4), 53), 0),
    "tiny Llama whose end-of-sequence token is the first one it generates: no early stop, 8 new tokens":
        lambda: _eos_case(),
    "the course model, 'The cat sat on the', 4 new tokens": lambda: (course_model()[0], course_ids(CAT_PROMPT)[None], 4),
}
NEAR_TIE = 1e-5  # a generated token whose logit is this close to the top one is an acceptable argmax


def _eos_case():
    """A copy of a tiny Llama whose eos_token_id is the first token greedy decoding produces after the prompt."""
    import copy

    model = copy.deepcopy(cached_tiny_model("llama", 0))
    ids = random_ids(128, (1, 6), 54)
    with torch.no_grad():
        first = int(model(ids).logits[0, -1].argmax())
    model.generation_config.eos_token_id = model.config.eos_token_id = first
    return model, ids, 8


def _reference_generate(model, ids: torch.Tensor, n: int) -> torch.Tensor:
    if n == 0:
        return ids.clone()
    eos = (model.generation_config.eos_token_id, model.config.eos_token_id)
    model.generation_config.eos_token_id = model.config.eos_token_id = None  # the exercise never stops early
    try:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=n,
                                 pad_token_id=eos[0] if isinstance(eos[0], int) else 0)
    finally:
        model.generation_config.eos_token_id, model.config.eos_token_id = eos
    if out.shape[1] != ids.shape[1] + n:
        raise RuntimeError(f"internal: generate stopped early on this case ({out.shape[1] - ids.shape[1]} of {n})")
    return out


def _greedy_wrong(model, ids, n, position: int) -> torch.Tensor:
    with torch.no_grad():
        for _ in range(n):
            ids = torch.cat([ids, model(ids).logits[:, position].argmax(-1, keepdim=True)], -1)
    return ids


def _greedy_up_to_ties(model, ids: torch.Tensor, out, n: int) -> bool:
    """True if `out` is the prompt followed by n tokens, each within NEAR_TIE of the top logit at its step.

    One forward pass over `out` gives the logits after every prefix. generate (with a KV cache) and a loop
    that reruns the whole sequence round differently, so where two logits are nearly equal either token is
    a correct greedy choice."""
    if (not isinstance(out, torch.Tensor) or out.dtype != ids.dtype or out.shape != (ids.shape[0], ids.shape[1] + n)
            or not torch.equal(out[:, :ids.shape[1]], ids) or n == 0):
        return False
    if bool((out < 0).any()) or bool((out >= model.config.vocab_size).any()):
        return False
    with torch.no_grad():
        logits = model(out[:, :-1]).logits[:, ids.shape[1] - 1:].double()
    chosen = logits.gather(-1, out[:, ids.shape[1]:, None])[..., 0]
    return bool((chosen >= logits.amax(-1) - NEAR_TIE).all())


def _check_greedy(out, inputs):
    model, ids, n = inputs
    expected = _reference_generate(model, ids, n)
    if not (isinstance(out, torch.Tensor) and torch.equal(out, expected)) and _greedy_up_to_ties(model, ids, out, n):
        return
    expect_tensor(out, expected, "prompt + generated ids", atol=0, rtol=0, mistakes=[
        ("you returned only the new tokens; return the prompt followed by them, [B, T + max_new_tokens].",
         lambda: expected[:, ids.shape[1]:]),
        ("you dropped the batch dimension; keep [B, T + max_new_tokens].", lambda: expected[0]),
        ("you predicted from the first position (logits[:, 0]); the next token comes from the LAST position, "
         "logits[:, -1].", lambda: _greedy_wrong(model, ids, n, 0)),
        ("you stopped at the end-of-sequence token: this loop always adds exactly max_new_tokens tokens, like "
         "generate(..., max_new_tokens=n) with no eos_token_id (stopping is a separate feature).",
         lambda: _stopped_at_eos(model, ids, expected)),
        ("max_new_tokens counts the NEW tokens, not the total length: the result has T + max_new_tokens columns.",
         lambda: expected[:, :max(n, ids.shape[1])] if n > ids.shape[1] else None),
    ])


def _stopped_at_eos(model, ids: torch.Tensor, expected: torch.Tensor):
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    new = expected[:, ids.shape[1]:]
    for i in range(new.shape[1]):
        if all(int(t) in eos for t in new[:, i]):
            return expected[:, :ids.shape[1] + i + 1]
    return None


# ---------------------------------------------------------------- the chapter


def _cases(inputs: dict, check, call: str = "call") -> list[Case]:
    return [Case(name, make, check, call) for name, make in inputs.items()]


# ---------------------------------------------------------------- stretch: repetition_penalty


def _rep_ids(vocab: int, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Seen ids with repeats: drawn from the first half of the vocabulary only."""
    return random_ids(max(1, vocab // 2), shape, seed)


def _rep_special() -> tuple:
    """Seen tokens whose logits are 0, -inf, positive and negative; the rows see different tokens."""
    x = torch.tensor([[0.0, NEG_INF, 3.0, -2.0, 1.0, -0.5], [0.0, NEG_INF, 3.0, -2.0, 1.0, -0.5]])
    return x, torch.tensor([[0, 1, 2, 3, 3, 3], [4, 5, 4, 5, 4, 5]]), 1.5


def _rep_real() -> tuple:
    ids = course_ids(CAT_PROMPT + " mat. The cat sat on the")[None]
    return _real()[None], ids, 1.2


REPETITION_INPUTS = {
    "the docstring's example: [[2, -1, 0.5]], ids [[0, 1, 1]], penalty 2": lambda: (
        torch.tensor([[2.0, -1.0, 0.5]]), torch.tensor([[0, 1, 1]]), 2.0),
    "a batch [4, 50], ids [4, 12] with repeats, penalty 1.3 (rows see different tokens)": lambda: (
        random_tensor((4, 50), 80, 2.0), _rep_ids(50, (4, 12), 81), 1.3),
    "one token repeated 20 times: penalised once, not 20 times, penalty 1.5": lambda: (
        random_tensor((2, 10), 82, 2.0), torch.tensor([[3] * 20, [7] * 20]), 1.5),
    "logits 0 and -inf among the seen tokens, penalty 1.5": _rep_special,
    "penalty 0.5 < 1 rewards repeats": lambda: (random_tensor((3, 30), 83, 2.0), _rep_ids(30, (3, 9), 84), 0.5),
    "penalty 1.0 changes nothing": lambda: (random_tensor((2, 20), 85), _rep_ids(20, (2, 6), 86), 1.0),
    "no tokens seen yet: ids [2, 0]": lambda: (random_tensor((2, 15), 87), torch.zeros(2, 0, dtype=torch.long), 1.4),
    "every token seen, V = 8, penalty 3": lambda: (random_tensor((2, 8), 88, 2.0), torch.arange(8).repeat(2, 2), 3.0),
    "float64 keeps float64, penalty 1.25": lambda: (
        random_tensor((2, 40), 89, 2.0, torch.float64), _rep_ids(40, (2, 15), 90), 1.25),
    "the course model's logits after 'The cat sat on the mat. The cat sat on the', penalty 1.2": _rep_real,
}


def _counts(input_ids: torch.Tensor, V: int) -> torch.Tensor:
    """[B, V] number of times each token occurs in each row."""
    return torch.zeros(input_ids.shape[0], V, dtype=torch.long).scatter_add_(
        -1, input_ids, torch.ones_like(input_ids))


def _check_repetition(out, inputs):
    import math

    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    x, ids, penalty = inputs
    expected = RepetitionPenaltyLogitsProcessor(penalty=float(penalty))(ids, x.clone())
    counts = _counts(ids, x.shape[-1])
    seen = counts > 0
    p = float(penalty)

    def scaled(mask: torch.Tensor, pos: torch.Tensor | float, neg: torch.Tensor | float) -> torch.Tensor:
        return torch.where(mask, torch.where(x < 0, x * neg, x / pos), x)

    powers = torch.tensor(p, dtype=torch.float64) ** counts.double()
    mistakes = [
        ("you divided every seen logit by the penalty: a NEGATIVE logit divided by a penalty > 1 moves towards 0, "
         "which makes the token MORE likely. Multiply negative logits by the penalty, divide positive ones.",
         lambda: torch.where(seen, x / p, x)),
        ("you swapped the two rules: positive logits are divided by the penalty, negative ones multiplied.",
         lambda: torch.where(seen, torch.where(x < 0, x / p, x * p), x)),
        ("you applied the penalty once per occurrence (penalty ** count): transformers penalises each seen token "
         "ONCE, however often it occurs (gather the seen logits, then scatter them back, or build a seen mask).",
         lambda: torch.where(seen, torch.where(x < 0, x * powers, x / powers), x.double()).to(x.dtype)),
        ("you penalised the tokens seen in ANY row: each row uses only its own ids (gather/scatter along dim=-1).",
         lambda: scaled(seen.any(0, keepdim=True).expand_as(x), p, p)),
        ("you penalised the tokens NOT seen: the penalty applies to the tokens in input_ids.",
         lambda: scaled(~seen, p, p)),
        ("you subtracted log(penalty) from the seen logits (a presence-style penalty); the repetition penalty "
         "divides positive logits and multiplies negative ones.", lambda: torch.where(seen, x - math.log(p), x)),
    ]
    expect_tensor(out, expected, f"logits after repetition penalty {penalty}", atol=0, rtol=1e-6, mistakes=mistakes)


CHAPTER = Chapter(
    number="04",
    module="ch04_sampling",
    title="Softmax and sampling",
    exercises=[
        Exercise(
            "softmax", "stable softmax along a dim: exp(x - max) / sum",
            _cases(SOFTMAX_INPUTS, _check_softmax),
            hint="Subtract logits.amax(dim=dim, keepdim=True) before exp: the largest entry becomes exp(0) = 1, "
                 "nothing overflows, and exp(-inf) = 0 handles masked tokens. Then divide by the sum along dim.",
            uses_course_model=True,
        ),
        Exercise(
            "apply_temperature", "logits / T, ValueError for T <= 0",
            _cases(TEMPERATURE_INPUTS, _check_temperature)
            + [Case("temperature 0 raises ValueError", lambda: (torch.tensor(FIVE), 0.0), _check_raises, "raises"),
               Case("temperature -0.5 raises ValueError", lambda: (torch.tensor(FIVE), -0.5), _check_raises, "raises"),
               Case("temperature NaN raises ValueError (NaN is not > 0)", lambda: (torch.tensor(FIVE), float("nan")),
                    _check_raises, "raises")],
            hint="Divide the logits (not the probabilities) by the temperature. Check the temperature first.",
        ),
        Exercise(
            "top_k_filter", "keep the k largest logits (ties with the k-th kept), others -inf",
            _cases(_top_k_inputs(), _check_top_k),
            hint="torch.topk(logits, k, dim=-1).values[..., -1:] is the k-th largest value of each row; remove what "
                 "is strictly below it with masked_fill(..., float('-inf')). Clamp k to the vocabulary size first.",
            uses_course_model=True,
        ),
        Exercise(
            "top_p_filter", "keep the smallest top set whose probability reaches p (crossing token kept)",
            _cases(_top_p_inputs(), _check_top_p),
            hint="Sort the probabilities. A token stays if the mass of the tokens MORE likely than it is still below "
                 "p; equivalently (transformers' way) sort ascending and remove tokens while the cumulative mass from "
                 "the bottom is <= 1 - p. Always keep the top token. Scatter the mask back to token order.",
            uses_course_model=True,
        ),
        Exercise(
            "min_p_filter", "keep tokens with p_i >= min_p * p_max, others -inf",
            _cases(_min_p_inputs(), _check_min_p),
            hint="Compute softmax, the row maximum probability (amax(dim=-1, keepdim=True)), and remove tokens whose "
                 "probability is below min_p times it.",
            uses_course_model=True,
        ),
        Exercise(
            "sample_next_token", "temperature -> top-k -> top-p -> one seeded torch.multinomial draw",
            _cases(SAMPLE_INPUTS, _check_seeded, "seeded")
            + [Case("one generator reused for 30 draws, V = 12, T = 0.9, top_p = 0.95",
                    lambda: (random_tensor((12,), 46, 1.5), 0.9, None, 0.95), _check_one_generator, "one_generator"),
               Case("temperature 0 is the argmax (no draw), 5 random logit vectors",
                    lambda: (random_tensor((5, 40), 47, 2.0),), _check_greedy_t0, "greedy_t0"),
               Case("temperature 0 takes no draw: T = 0 and T = 1 calls alternating on one generator, V = 10",
                    lambda: (random_tensor((6, 10), 49, 1.0),), _check_t0_interleaved, "t0_interleaved")]
            + _cases(STAT_INPUTS, _check_frequencies, "frequencies"),
            hint="If temperature == 0 return int(logits.argmax()). Otherwise apply_temperature, then top_k_filter if "
                 "top_k is not None, then top_p_filter if top_p is not None, then softmax over the whole vocabulary, "
                 "then int(torch.multinomial(probs, 1, generator=generator)).",
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "greedy_generate", "a loop: forward, argmax of the last position, append; equals generate(do_sample=False)",
            _cases(GREEDY_INPUTS, _check_greedy, "greedy"),
            hint="Repeat max_new_tokens times: logits = model(ids).logits[:, -1, :]; next = logits.argmax(-1, "
                 "keepdim=True); ids = torch.cat([ids, next], dim=-1). Wrap it in torch.no_grad().",
            timeout_s=120.0,
            uses_course_model=True,
        ),
        Exercise(
            "repetition_penalty", "stretch: CTRL repetition penalty, equal to RepetitionPenaltyLogitsProcessor",
            _cases(REPETITION_INPUTS, _check_repetition),
            hint="Gather the seen logits, seen = logits.gather(-1, input_ids); penalise them with torch.where(seen < 0, "
                 "seen * penalty, seen / penalty); write them back with logits.scatter(-1, input_ids, ...). A repeated "
                 "id gathers the same original logit, so it is penalised once.",
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "Why does a careful softmax subtract max(logits) before exponentiating?",
                 {"a": "it moves probability towards the most likely token",
                  "b": "exp cannot overflow, and the result is unchanged",
                  "c": "it makes every logit positive",
                  "d": "it is only needed for log-softmax"},
                 "07804d7d12cc48bd5184",
                 "Reread 'Overflow, and the max shift' in notebook 04."),
        Question(2, "Logits [2.3, 1.5, 3.8, 0.5, 1.2] at temperature T = 0.5 instead of T = 1. The probability of "
                    "the top token (3.8):",
                 {"a": "decreases", "b": "does not change", "c": "increases", "d": "becomes exactly 1"},
                 "d3857a94f650af769ed7",
                 "Reread 'Temperature' in notebook 04."),
        Question(3, "Top-p with p = 0.9 on the probabilities 0.70, 0.16, 0.07, 0.05, 0.02 keeps how many tokens?",
                 {"a": "2", "b": "3", "c": "4", "d": "5"},
                 "95f7923bb75051036654",
                 "Reread section 6, 'Top-p (nucleus)', in notebook 04, and count with its rule."),
        Question(4, "model.generate(do_sample=True, temperature=0.7, top_p=0.9) in transformers:",
                 {"a": "divides the logits by 0.7, then applies top-k and top-p",
                  "b": "applies top-p to the raw logits, then divides by 0.7",
                  "c": "applies only top-p, since temperature is ignored when top_p is set",
                  "d": "samples with each setting separately and averages"},
                 "fbb68a75abfe9f9e5424",
                 "Reread 'Temperature + top-p, in the order transformers applies them' in notebook 04."),
        Question(5, "In a tied model without bias, multiplying the final hidden vector h by 2 is the same as:",
                 {"a": "temperature 2", "b": "adding 2 to every logit", "c": "temperature 0.5", "d": "no change"},
                 "ea613ae0dfcb30a29920",
                 "Reread 'Scaling h is a temperature' in notebook 04."),
    ],
)
