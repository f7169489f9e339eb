"""Chapter 04: top_k_filter, top_p_filter and min_p_filter against transformers' own logits warpers."""
from __future__ import annotations

import torch

from ...i18n import _
from ..compare import named_mistake
from ..fixtures import random_tensor
from .common import (FIVE, NEG_INF, _as_rows, _binary, _binary_min_p, _check_filter, _crossing, _cut_probs, _real,
                     _removed_to_zero, _softmax64, _ties, _with_neg_inf)


# ---------------------------------------------------------------- top-k


def _top_k_inputs():
    return {
        _("the five logits, k = 3"): lambda: (torch.tensor(FIVE), 3),
        _("a batch [4, 50], k = 5"): lambda: (random_tensor((4, 50), 12, 2.0), 5),
        _("ties at the k-th value, [3, 12], k = 2"): lambda: (_ties((3, 12), 13), 2),
        _("k = 1 with a tie at the top"): lambda: (torch.tensor([[1.0, 3.0, 3.0, 0.5], [2.0, 1.0, 0.0, -1.0]]), 1),
        _("k = V keeps everything"): lambda: (random_tensor((2, 10), 14), 10),
        _("k > V keeps everything"): lambda: (random_tensor((2, 10), 15), 17),
        _("-inf entries, k larger than the finite count in some rows"): lambda: (_with_neg_inf(random_tensor((3, 20), 16), 17, 0.6), 12),
        _("1-D logits [30], k = 4"): lambda: (random_tensor((30,), 18), 4),
        _("3-D logits [2, 3, 16], k = 3"): lambda: (random_tensor((2, 3, 16), 19), 3),
        _("huge logits (scale 1e4), k = 10"): lambda: (random_tensor((2, 40), 20, 1e4), 10),
        _("float64, k = 6"): lambda: (random_tensor((2, 25), 21, dtype=torch.float64), 6),
        _("float64 logits that differ only after float32's digits (1 + 1e-12 > 1), k = 2"): lambda: (
            torch.tensor([[1.0, 1.0 + 1e-12, 0.5, 1.0 + 3e-12, 1.0 - 1e-12]], dtype=torch.float64), 2),
        _("the course model's logits, k = 50"): lambda: (_real(), 50),
    }


def _check_top_k(out, inputs):
    from transformers.generation.logits_process import TopKLogitsWarper

    x, k = inputs
    expected = _as_rows(TopKLogitsWarper(top_k=k), x)

    def exactly_k():
        kk = min(k, x.shape[-1])
        top = torch.topk(x, kk, dim=-1)
        return torch.full_like(x, NEG_INF).scatter(-1, top.indices, top.values)

    ties = _("ties at the k-th value (with k = 1, a tie at the top): transformers keeps EVERY token whose logit equals "
             "the k-th largest (compare with the k-th value, logits < kth), so a tie can keep more than k tokens; topk's "
             "indices or an argmax keep only one of them.")
    mistakes = [(ties, exactly_k),
                (ties, lambda: torch.full_like(x, NEG_INF).scatter(-1, x.argmax(-1, keepdim=True),
                                                                    x.amax(-1, keepdim=True))),
                (_("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax."),
                 lambda: _removed_to_zero(x, expected))]
    for kk, word in ((k + 1, "k + 1"), (k - 1, "k - 1")):
        if kk >= 1:
            mistakes.append((_("an off-by-one: you kept {word} tokens.", word=word),
                             lambda kk=kk: _as_rows(TopKLogitsWarper(top_k=kk), x)))
    if x.dtype == torch.float64:
        def in_float32():
            x32 = x.float()
            kth = torch.topk(x32, min(k, x.shape[-1]), dim=-1).values[..., -1:]
            return x.masked_fill(x32 < kth, NEG_INF)

        mistakes.append((_("you compared the logits in float32 (a .float() copy, or a float32 k-th value): float64 "
                           "logits that differ only past float32's 7 digits became ties and were all kept. Compare "
                           "them in their own dtype."), in_float32))
    if x.dim() > 1:
        def whole_tensor():
            kth = torch.topk(x.flatten(), min(k, x.numel())).values[-1]
            return x.masked_fill(x < kth, NEG_INF)

        mistakes.append((_("you took the k largest of the whole tensor: top-k works per row (dim=-1), and every row "
                           "keeps its own k tokens."), whole_tensor))
    _check_filter(out, x, expected, torch.zeros_like(x, dtype=torch.bool), _("top-{k} filter", k=k), mistakes)


# ---------------------------------------------------------------- top-p


def _top_p_inputs():
    return {
        _("the five logits, p = 0.9 (keeps three)"): lambda: (torch.tensor(FIVE), 0.9),
        _("probabilities [0.15, 0.5, 0.05, 0.3], p = 0.7 (the 0.3 token crosses p)"): lambda: (_crossing(), 0.7),
        _("a batch [4, 50], p = 0.8"): lambda: (random_tensor((4, 50), 22, 2.0), 0.8),
        _("p = 1.0 keeps everything"): lambda: (random_tensor((3, 30), 23), 1.0),
        _("p = 0.01 keeps only the top token"): lambda: (random_tensor((3, 30), 24), 0.01),
        _("p = 0 still keeps the top token, [8, 30]"): lambda: (random_tensor((8, 30), 60, 0.5), 0.0),
        _("p = 0 on the five logits"): lambda: (torch.tensor(FIVE), 0.0),
        _("p = 1e-6, float64, [4, 30]"): lambda: (random_tensor((4, 30), 61, 0.3, torch.float64), 1e-6),
        _("ties, [3, 12], p = 0.5"): lambda: (_ties((3, 12), 25), 0.5),
        _("-inf entries, p = 0.9"): lambda: (_with_neg_inf(random_tensor((3, 20), 26), 27), 0.9),
        _("huge logits (scale 1e3), p = 0.95"): lambda: (random_tensor((2, 40), 28, 1e3), 0.95),
        _("1-D logits [30], p = 0.6"): lambda: (random_tensor((30,), 29), 0.6),
        _("3-D logits [2, 3, 16], p = 0.75"): lambda: (random_tensor((2, 3, 16), 30, 1.5), 0.75),
        _("float64, p = 0.85"): lambda: (random_tensor((2, 25), 31, dtype=torch.float64), 0.85),
        _("the course model's logits, p = 0.9"): lambda: (_real(), 0.9),
        _("probabilities [0.4, 0.2, 0.2, 0.2], p = 0.5: one of the three tied tokens must stay (kept mass 0.6)"):
            lambda: (torch.tensor([0.4, 0.2, 0.2, 0.2]).log(), 0.5),
        _("tied groups at the cut in a batch [2, 6], p = 0.55"): lambda: (
            torch.tensor([[0.1, 0.3, 0.15, 0.15, 0.15, 0.15], [0.25, 0.25, 0.25, 0.25, 0.0, 0.0]]).log(), 0.55),
        **{_("probabilities exactly 0.5, 0.25, 0.125, 0.125 (float32, two rows), p = {p}: exactly on a cumulative "
             "boundary", p=p): lambda p=p: (_binary(), p) for p in (0.75, 0.5, 0.875)},
    }


def _top_p_ambiguous(x: torch.Tensor, p: float, tol: float | None = None) -> torch.Tensor:
    """Tokens that may be kept or removed: a tie or float rounding decides at the threshold.

    transformers removes a token when the mass of itself and every token sorted below it is <= 1 - p.
    With ties that mass depends on the order among equal logits, so it is a range, computed in float64 (of the
    logits' own-dtype probabilities where they are exact, _cut_probs: then without the rounding tolerance).
    """
    rows = x.reshape(-1, x.shape[-1]).double().contiguous()
    probs, exact = (t.reshape(-1, t.shape[-1]) for t in _cut_probs(x))
    if tol is None:  # the contract's rounding window: 1e-5, or the half-precision dtype's own
        tol = 1e-5 if x.dtype in (torch.float32, torch.float64) else 4 * torch.finfo(x.dtype).eps
    tol = torch.where(exact, 0.0, tol)  # an exact cut (dyadic probabilities) is decided by `<=` itself
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
    ambiguous |= top_group & (n_top > 1)  # tied top tokens: any one of them may be the one always kept
    ambiguous &= torch.isfinite(rows)
    return ambiguous.reshape(x.shape)


def _top_p_dropping_crossing(x: torch.Tensor, p: float, keep_first: bool) -> torch.Tensor:
    probs, order = _softmax64(x).sort(-1, descending=True)
    drop = probs.cumsum(-1) > p
    if keep_first:
        drop[..., 0] = False
    return x.masked_fill(drop.scatter(-1, order, drop), NEG_INF)


TOP_P_BOUNDARY = _("a token exactly on the boundary was kept: when the tokens before it (most likely first) already "
                   "hold exactly p, it is REMOVED. transformers removes a token when the ascending cumulative mass up "
                   "to and including it is <= 1 - p (<=, not <); from the top, a token stays only while the mass "
                   "before it is strictly below p.")


def _top_p_strict(x: torch.Tensor, p: float) -> torch.Tensor:
    """transformers' top-p rule with `<` for its `<=`: a token whose ascending cumulative mass equals 1 - p stays."""
    sorted_logits, order = x.sort(-1)
    drop = torch.softmax(sorted_logits, -1).cumsum(-1) < 1 - p
    drop[..., -1] = False
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
        (_("top-p that drops the token crossing the threshold: keep tokens, most likely first, until the kept mass "
           "REACHES p, including the token that takes it past p (p = 0.9 on the chapter's five logits keeps three)."),
         lambda: _top_p_dropping_crossing(x, p, True)),
        (_("top-p that drops the token crossing the threshold (and so may remove every token): keep tokens until the "
           "kept mass reaches p, including the one that crosses it."), lambda: _top_p_dropping_crossing(x, p, False)),
        (TOP_P_BOUNDARY, lambda: _top_p_strict(x, p)),
        (_("you returned the logits in sorted order; scatter the mask back to the original token positions."),
         lambda: expected.sort(-1, descending=True).values),
        (_("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax."),
         lambda: _removed_to_zero(x, expected)),
    ]
    if x.dim() > 1 and x.shape[0] > 1:
        mistakes.append((_("softmax over the wrong dimension: a row's probabilities are softmax(logits, dim=-1)."),
                         lambda: _top_p_from_probs(x, _softmax64(x, 0), p)))
    if x.dim() > 1:
        def global_shift():
            e = (x - x.max()).exp()
            return _top_p_from_probs(x, e / e.sum(-1, keepdim=True), p)

        mistakes.append((_("you shifted by the max of the whole tensor, not of each row: a row far below it underflows "
                           "to exp() = 0 everywhere, and 0/0 is NaN. Subtract each row's own max (amax(dim=-1, "
                           "keepdim=True)), or use the stable softmax."), global_shift))
    if p == 0:
        mistakes.insert(0, (_("p = 0 keeps only the top token: `if not p` (or `p or 1.0`) treats 0.0 as 'no filter'. "
                              "Compare with None when you mean 'not given'."), x))
    ambiguous = _top_p_ambiguous(x, p)
    _check_kept_mass(out, x, expected, ambiguous, p, mistakes)
    _check_filter(out, x, expected, ambiguous, _("top-p filter (p = {p})", p=p), mistakes)


def _check_kept_mass(out, x: torch.Tensor, expected: torch.Tensor, ambiguous: torch.Tensor, p: float, mistakes,
                     tol: float = 1e-5) -> None:
    """Where ties (or rounding) leave a choice at the cut, the kept set must still be transformers' set up to the
    order among equal logits: its mass reaches p, and it stops there (dropping its least likely token would
    leave less than p). A failure names the one mistake of `mistakes` that gives `out` exactly, if one does."""
    if not (isinstance(out, torch.Tensor) and out.shape == x.shape and out.dtype == x.dtype) or not bool(ambiguous.any()):
        return
    tol = tol if x.dtype in (torch.float32, torch.float64) else 4 * torch.finfo(x.dtype).eps
    rows, exp_rows = out.reshape(-1, x.shape[-1]), expected.reshape(-1, x.shape[-1])
    probs, exact = (t.reshape(-1, t.shape[-1]) for t in _cut_probs(x))
    amb = ambiguous.reshape(rows.shape)
    for r in range(rows.shape[0]):
        tol_r = 0.0 if bool(exact[r]) else tol  # an exact cut: the mass must reach p exactly, and stop there
        fixed = ~amb[r]
        if not amb[r].any() or not torch.equal(torch.isfinite(rows[r])[fixed], torch.isfinite(exp_rows[r])[fixed]):
            continue  # nothing to choose in this row, or other differences that the comparison below explains
        kept = torch.isfinite(rows[r]) & torch.isfinite(x.reshape(rows.shape)[r])
        if not bool(kept.any()) and bool(torch.isfinite(x.reshape(rows.shape)[r]).any()):
            raise named_mistake(out, mistakes, 0.0, 0.0, expected).fail(_(
                "top-p filter (p = {p}), row {r}: you removed every token; the most likely token is always kept "
                "(one of them, when several are tied at the top).", p=p, r=r))
        mass = float(probs[r][kept].sum())
        if mass < p - tol_r and bool(kept.any()):
            raise named_mistake(out, mistakes, 0.0, 0.0, expected).fail(_(
                "top-p filter (p = {p}), row {r}: the kept tokens' probability mass is {mass:.4f}, below p. Tokens "
                "tied at the cut must not all be removed together: keep them one by one, most likely first (any "
                "order among equal logits), until the kept mass reaches p, as transformers does after its sort.",
                p=p, r=r, mass=mass))
        without_least = mass - float(probs[r][kept].min())
        if int(kept.sum()) > 1 and without_least >= p + tol_r:
            raise named_mistake(out, mistakes, 0.0, 0.0, expected).fail(_(
                "top-p filter (p = {p}), row {r}: you kept mass {mass:.4f}, more than needed: without its least "
                "likely token the kept set would still reach p. With tokens tied at the cut, keep only as many of "
                "them as it takes to reach p (transformers keeps the first ones of its sort order).",
                p=p, r=r, mass=mass))


# ---------------------------------------------------------------- min-p


def _min_p_inputs():
    return {
        _("the five logits, min_p = 0.1"): lambda: (torch.tensor(FIVE), 0.1),
        _("a batch [4, 50], min_p = 0.05"): lambda: (random_tensor((4, 50), 32, 2.0), 0.05),
        _("min_p = 0 keeps everything"): lambda: (random_tensor((2, 20), 33), 0.0),
        _("min_p = 1 keeps only the top token(s), ties kept"): lambda: (_ties((3, 12), 34), 1.0),
        _("-inf entries, min_p = 0.2"): lambda: (_with_neg_inf(random_tensor((3, 20), 35), 36), 0.2),
        _("huge logits (scale 1e3), min_p = 0.01"): lambda: (random_tensor((2, 40), 37, 1e3), 0.01),
        _("1-D logits [30], min_p = 0.3"): lambda: (random_tensor((30,), 38), 0.3),
        _("3-D logits [2, 3, 16], min_p = 0.15"): lambda: (random_tensor((2, 3, 16), 39, 1.5), 0.15),
        _("float64, min_p = 0.1"): lambda: (random_tensor((2, 25), 40, dtype=torch.float64), 0.1),
        _("the course model's logits, min_p = 0.1"): lambda: (_real(), 0.1),
        **{_("exact float32 probabilities [0.5, 0.25, 0.125, 0.125, 0] and [0.25, 0.25, 0.1875, 0.1875, 0.125], "
             "min_p = {min_p}: probabilities exactly equal to min_p * p_max", min_p=m): lambda m=m: (_binary_min_p(), m)
           for m in (0.25, 0.5)},
    }


def _check_min_p(out, inputs):
    from transformers.generation.logits_process import MinPLogitsWarper

    x, min_p = inputs
    expected = _as_rows(MinPLogitsWarper(min_p=min_p), x)
    probs, exact = _cut_probs(x)
    threshold = min_p * probs.amax(-1, keepdim=True)
    top = x == x.amax(-1, keepdim=True)  # always kept, ties included
    rel = 1e-5 if x.dtype in (torch.float32, torch.float64) else 4 * torch.finfo(x.dtype).eps  # the contract's
    ambiguous = ((probs - threshold).abs() <= rel * threshold) & torch.isfinite(x) & ~top & ~exact
    absolute = _("you compared the probabilities with min_p itself; min-p scales the threshold by the top token's "
                 "probability: keep p_i >= min_p * max_j p_j.")
    _check_filter(out, x, expected, ambiguous, _("min-p filter (min_p = {min_p})", min_p=min_p), [
        (absolute, lambda: x.masked_fill((probs < min_p) & ~top, NEG_INF)),
        (absolute, lambda: x.masked_fill(probs < min_p, NEG_INF)),
        (_("you compared logits with min_p * (the largest logit); the rule is on probabilities: "
           "p_i >= min_p * p_max, i.e. logit_i >= max logit + log(min_p)."),
         lambda: x.masked_fill(x < min_p * x.amax(-1, keepdim=True), NEG_INF)),
        (_("removed entries must be -inf, not 0: a logit of 0 still gets probability after softmax."),
         lambda: _removed_to_zero(x, expected)),
        (_("a probability exactly equal to min_p * p_max was removed: transformers removes only probabilities "
           "strictly below the threshold (probs < min_p * p_max), so one equal to it is kept. Compare with <, not "
           "<=."), lambda: x.masked_fill((probs <= threshold) & ~top, NEG_INF)),
        (_("your probabilities overflowed: exp of a large logit without the max shift is inf, inf / inf is NaN, and "
           "NaN < threshold is False, so nothing was removed. Use the stable softmax (subtract the row max)."),
         lambda: x if not bool(torch.isfinite(x.exp().sum(-1)).all()) else None),
        (_("you scaled min_p by the top probability of the whole tensor; each row uses its own top probability "
           "(amax(dim=-1, keepdim=True))."), lambda: x.masked_fill(probs < min_p * probs.max(), NEG_INF)),
    ])
