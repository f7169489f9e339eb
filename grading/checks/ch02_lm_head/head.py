"""Chapter 02: lm_head_logits, top_k_tokens, lm_head_flops and logit_contributions."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from ..compare import CheckFailed, expect_equal, expect_float, expect_tensor, expect_that, expect_tuple
from ..fixtures import course_model, random_table, ranked_ids, token_id
from ...i18n import _
from .common import _cat_forward, _head_weight


# ---------------------------------------------------------------- lm_head_logits


def _real_head_inputs():
    return _cat_forward()[0].clone(), _head_weight()


LOGITS_INPUTS = {
    _("one vector h [8], V=20"): lambda: (random_table(1, 8, 21)[0], random_table(20, 8, 22), None),
    _("T=5 positions [5, 16], V=40"): lambda: (random_table(5, 16, 23), random_table(40, 16, 24), None),
    _("a batch [2, 3, 8], V=11"): lambda: (random_table(6, 8, 25).reshape(2, 3, 8), random_table(11, 8, 26), None),
    _("a square head V = d = 6 (W and W.T differ)"): lambda: (random_table(4, 6, 27), random_table(6, 6, 28), None),
    _("with a bias b [30]"): lambda: (random_table(4, 12, 29), random_table(30, 12, 30), random_table(1, 30, 31)[0]),
    _("one vector h [12] with a bias b [30]"): lambda: (random_table(1, 12, 38)[0], random_table(30, 12, 39),
                                                     random_table(1, 30, 40)[0]),
    _("a batch [2, 3, 12] with a bias b [30] (the bias broadcasts over every leading dimension)"): lambda: (
        random_table(6, 12, 41).reshape(2, 3, 12), random_table(30, 12, 42), random_table(1, 30, 43)[0]),
    _("square head with a bias"): lambda: (random_table(3, 5, 32), random_table(5, 5, 33), random_table(1, 5, 34)[0]),
    _("float64 keeps float64"): lambda: (random_table(3, 7, 35, torch.float64), random_table(9, 7, 36, torch.float64), None),
    _("no positions, h [0, 8] -> [0, V]"): lambda: (torch.zeros(0, 8), random_table(13, 8, 37), None),
    _("the real head: final-normed states of 'The cat sat on the' [5, 576], W = lm_head.weight [49152, 576]"):
        lambda: (*_real_head_inputs(), None),
}


def _logits_mistakes(h, W, b):
    plain = h.double() @ W.double().T
    if W.shape[0] == h.shape[-1]:
        yield (_("you multiplied by W instead of W.T. W is stored as [V, d] (one row per token, like nn.Linear(d, V)."
                 "weight), so the product is h @ W.T: each logit is h dotted with one ROW of W."),
               lambda: (h.double() @ W.double() + (0 if b is None else b.double())))
    if b is not None:
        yield (_("you left out the bias: logits = h @ W.T + b."), plain)
        yield (_("you subtracted the bias: logits = h @ W.T + b."), plain - b.double())
    full = plain + (0 if b is None else b.double())
    yield (_("you applied softmax: the head returns logits (raw, unbounded scores), not probabilities."),
           lambda: torch.softmax(full, dim=-1))
    if h.dim() >= 2 and h.shape[-2] > 0:
        yield (_("you kept only the last position. The head scores every position it is given; choosing the last "
                 "one is the caller's business."), lambda: full[..., -1, :])
    for squeezed in [full.squeeze()] + [full.squeeze(i) for i, n in enumerate(full.shape) if n == 1]:
        yield (_("you squeezed away a size-one dimension: logits keep every dimension of h, so a [1, d] h gives [1, V] "
                 "logits (no .squeeze())."), squeezed)


def _check_logits(out, inputs):
    h, W, b = inputs
    if W.shape == _head_weight().shape and h.shape == _cat_forward()[0].shape:
        expected = _cat_forward()[1]  # the model's own logits
        expect_tensor(out, expected, _("logits vs model(ids).logits[0]"), atol=1e-4, rtol=1e-4,
                      mistakes=list(_logits_mistakes(h, W, b)))
        with torch.no_grad():
            own_head = course_model()[0].lm_head(h)
        expect_tensor(out, own_head, _("logits vs model.lm_head(h)"), atol=1e-4, rtol=1e-4)
        return
    expected = F.linear(h.double(), W.double(), None if b is None else b.double()).to(h.dtype)
    tol = 1e-10 if h.dtype == torch.float64 else 1e-5
    expect_tensor(out, expected, _("logits"), atol=tol, rtol=1e-5, mistakes=list(_logits_mistakes(h, W, b)))


# ---------------------------------------------------------------- top_k_tokens


def _rounded_real_logits():
    return (_cat_forward()[1][-1] * 2).round() / 2  # many ties, like a coarse-precision model


TOPK_INPUTS = {
    _("distinct values, V=10, k=3"): lambda: (random_table(1, 10, 41)[0], 3),
    _("ties: [1, 3, 3, 2, 3], k=2 -> ids [1, 2]"): lambda: (torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 2),
    _("k=1 with a tie for the maximum"): lambda: (torch.tensor([0.5, 2.0, -1.0, 2.0]), 1),
    _("all values equal, k=4"): lambda: (torch.zeros(9), 4),
    _("k = V: the whole vocabulary in order"): lambda: (random_table(1, 12, 42)[0], 12),
    _("k = 0: empty values and ids"): lambda: (random_table(1, 6, 43)[0], 0),
    _("masked logits with -inf, k reaches into them"): lambda: (
        torch.tensor([0.3, float("-inf"), 1.2, float("-inf"), -0.7, float("-inf")]), 5),
    _("negative logits only"): lambda: (-random_table(1, 15, 44)[0].abs() - 1, 4),
    _("bfloat16 logits with many ties, V=1000, k=50"): lambda: (random_table(1, 1000, 45, torch.bfloat16)[0], 50),
    _("the model's logits after 'The cat sat on the', k=12"): lambda: (_cat_forward()[1][-1].clone(), 12),
    _("the same logits rounded to 0.5 (ties), k=20"): lambda: (_rounded_real_logits(), 20),
}


def _reference_topk(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = ranked_ids(logits)[:k]  # larger value first, equal values by increasing id
    return logits[ids], ids


def _check_topk(out, inputs):
    logits, k = inputs
    values, ids = _reference_topk(logits, k)
    got_values, got_ids = expect_tuple(out, 2, _("(values, ids)"))
    if (isinstance(got_values, torch.Tensor) and isinstance(got_ids, torch.Tensor) and logits.is_floating_point()
            and not got_values.is_floating_point() and got_ids.is_floating_point()):
        raise CheckFailed(_("you returned (ids, values): return (values, ids), like torch.topk."))
    probs = torch.softmax(logits.double(), dim=-1)
    ascending = torch.sort(logits, stable=True).indices[:k]  # the k smallest, equal values by increasing id
    everything = ranked_ids(logits)
    zero = [(_("k = 0 asks for no tokens: `k or len(logits)` (or `if not k`) treats 0 as 'all'. Slicing [:k] with "
               "k = 0 already gives empty tensors."), lambda: logits[everything])] if k == 0 else []
    expect_tensor(got_values, values, _("top-{k} values", k=k), atol=0, rtol=0, mistakes=zero + [
        (_("you took the k SMALLEST values: sort in descending order."), lambda: logits[ascending]),
        (_("you returned probabilities: the values asked for are the logits themselves."),
         lambda: probs[ids].to(logits.dtype)),
    ])
    if isinstance(got_ids, torch.Tensor) and got_ids.shape == ids.shape and not torch.equal(got_ids, ids):
        in_range = bool(((got_ids >= 0) & (got_ids < logits.shape[0])).all()) if got_ids.numel() else True
        if in_range and not got_ids.is_floating_point() and torch.equal(logits[got_ids.long()], values):
            first = int((got_ids != ids).nonzero()[0])
            raise CheckFailed(_(
                "top-{k} ids: the values are right, but equal values must be listed by increasing id. "
                "At position {first} you gave id {got}, expected {want} "
                "(both have the value {value:g}). torch.topk does not promise any order among "
                "ties; a stable descending sort does.",
                k=k, first=first, got=int(got_ids[first]), want=int(ids[first]), value=float(values[first])))
    expect_tensor(got_ids, ids, _("top-{k} ids", k=k), atol=0, rtol=0, mistakes=[
        (_("you took the ids of the k SMALLEST values: sort in descending order."), ascending),
    ])


# ---------------------------------------------------------------- lm_head_flops


FLOPS_INPUTS = {
    _("course model, one position (default positions=1)"): (576, 49152),
    _("Qwen3-0.6B, one position (about 3.11e8)"): (1024, 151936, 1),
    _("Qwen3-0.6B, all 1000 positions of a prompt"): (1024, 151936, 1000),
    _("Qwen3.5-0.8B, one position"): (1024, 248320, 1),
    _("GPT-2 small, 1024 positions"): (768, 50257, 1024),
    _("the toy head d=512, V=100,000, 5 positions"): (512, 100000, 5),
    _("zero positions"): (576, 49152, 0),
    _("GPT-3-sized head, 2048 positions"): (12288, 50257, 2048),
    _("GPT-2 small over a training run of 100,000,000,001 positions (the count passes 2**53: a float cannot hold it)"):
        (768, 50257, 100_000_000_001),
}


def _measured_flops(d: int, V: int, positions: int) -> int:
    """FLOPs PyTorch's own counter reports for [positions, d] @ [d, V], on the meta device (no memory)."""
    with FlopCounterMode(display=False) as counter:
        torch.empty(positions, d, device="meta") @ torch.empty(V, d, device="meta").T
    return int(counter.get_total_flops())


def _check_flops(out, inputs, expected: int | None = None):
    """Against PyTorch's own FLOP counter, or `expected` (the generated inputs' exact integer product: cheaper)."""
    d, V, positions = (*inputs, 1)[:3]
    expected = _measured_flops(d, V, positions) if expected is None else expected
    zero = [(_("positions = 0 is a valid count (no positions, no work): `positions or 1` treats 0 as 1. Test "
               "`is None` for a missing value, never truthiness."), 2 * d * V)] if positions == 0 else []
    expect_equal(out, expected, _("FLOPs of the head, d={d:,}, V={V:,}, positions={positions:,}", d=d, V=V,
                                  positions=positions), mistakes=zero + [
        (_("you counted a multiply-add as one operation: it is two (one multiply, one add)."), d * V * positions),
        (_("you left out the positions: the cost grows with the number of positions scored."), 2 * d * V),
        (_("you returned a float: return an exact int (use integer arithmetic)."), float(expected)),
        (_("you counted d - 1 additions per logit: the convention (PyTorch's FlopCounterMode, and the chapter) "
           "counts each multiply-add as 2, so 2 * d operations per logit."), (2 * d - 1) * V * positions),
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
    _("toy 8-d, aligned (|w| = 1.5, cos = 1)"): lambda: _toy_pair("aligned"),
    _("toy 8-d, orthogonal (cos = 0)"): lambda: _toy_pair("orthogonal"),
    _("toy 8-d, opposite (cos = -1)"): lambda: _toy_pair("opposite"),
    _("random 16-d pair, float64"): lambda: (random_table(1, 16, 53, torch.float64)[0], random_table(1, 16, 54, torch.float64)[0]),
    _("h is the zero vector (cos = 0.0 by convention)"): lambda: (torch.zeros(5), random_table(1, 5, 55)[0]),
    _("w is the zero vector (cos = 0.0 by convention)"): lambda: (random_table(1, 5, 56)[0], torch.zeros(5)),
    _("real: h_last of 'The cat sat on the' and the head row of ' cat'"): lambda: _real_pair("cat"),
    _("real: h_last and the row of the lowest-scoring token"): lambda: _real_pair("lowest"),
}


def _exact_cos(hd: torch.Tensor, wd: torch.Tensor) -> float:
    """cos(h, w) in float64 without F.cosine_similarity's epsilon (which changes the cosine of tiny vectors)."""
    norms = float(hd.norm() * wd.norm())
    return min(1.0, max(-1.0, float(hd @ wd) / norms)) if norms > 0 else 0.0


def _cos_mistakes(h, w, hd, wd, ref_cos: float) -> list:
    """F.cosine_similarity's epsilon on tiny vectors; a cosine computed in the input's half precision or in float32,
    where products and norms overflow or underflow."""
    out = []
    eps_cos = float(F.cosine_similarity(hd, wd, dim=0))
    if abs(eps_cos - ref_cos) > 1e-3:
        out.append((_("F.cosine_similarity divides by max(|h|, eps) and max(|w|, eps) with eps = 1e-8, so the cosine "
                      "of tiny vectors comes out near 0: divide h.w by |h| |w| yourself (in float64)."), eps_cos))
    for dtype in dict.fromkeys(d for d in (h.dtype, torch.float32) if d != torch.float64):
        with torch.no_grad():
            hl, wl = h.to(dtype), w.to(dtype)
            low = float(((hl * wl).sum() / (hl.norm() * wl.norm())).clamp(-1, 1))
        if not abs(low - ref_cos) <= 1e-2:
            out.append((_("you computed the cosine in a dtype narrower than float64 (the input's own half precision, "
                          "or float32): its products or norms overflow or underflow there (float16 ends at 65,504, "
                          "float32 and bfloat16 near 3.4e38). Compute it in float64."), low))
    return out


def _check_contributions(out, inputs, cos_tol: float = 1e-5):
    h, w = inputs
    contributions, cos = expect_tuple(out, 2, _("(contributions, cos)"))
    hd, wd = h.double(), w.double()
    expected = (hd * wd).to(h.dtype)
    expect_tensor(contributions, expected, _("per-dimension contributions h[i] * w[i]"), atol=1e-6, rtol=1e-5,
                  mistakes=[
        (_("you returned a running (cumulative) sum: each entry is one dimension's product h[i] * w[i]."),
         torch.cumsum(hd * wd, 0)),
        (_("you normalised the vectors first: the contributions use h and w as they are (they sum to the logit)."),
         lambda: (F.normalize(hd, dim=0) * F.normalize(wd, dim=0))),
    ])
    if h.shape[0] == 576:  # the real row: the contributions must add up to the model's own logit
        j = int((_head_weight() == w).all(dim=1).nonzero()[0])
        logit = float(_cat_forward()[1][-1, j])
        expect_float(float(contributions.double().sum()), logit, _("sum of the contributions vs the model's logit"),
                     atol=1e-3, rtol=1e-4)
    ref_cos = _exact_cos(hd, wd)
    dot = float(hd @ wd)
    wrong = [(_("you returned the dot product (the logit), not the cosine: divide by |h| |w|."), dot)] \
        if abs(dot) > 1e-4 \
        else []
    if -1 < ref_cos < 1 and hd.norm() > 0 and wd.norm() > 0:
        wrong += [
            (_("you returned the angle in radians: the cosine is asked for."), float(np.arccos(ref_cos))),
            (_("you returned the angle in degrees: the cosine is asked for."), float(np.degrees(np.arccos(ref_cos)))),
            (_("you divided by |w| only: that is the length of h's projection on w, not the cosine."),
             dot / float(wd.norm())),
            (_("you divided by |h| only: divide by |h| |w|."), dot / float(hd.norm())),
        ]
    wrong += _cos_mistakes(h, w, hd, wd, ref_cos)
    expect_that(not isinstance(cos, torch.Tensor) or cos.numel() == 1,
                _("cos: expected one number (a float), got a tensor of several values."))
    value = cos.item() if isinstance(cos, torch.Tensor) else cos
    expect_that(not isinstance(value, float) or not 1.0 < abs(value) <= 1.0 + 1e-4, _(  # far outside: see below
        "cos = {value!r} lies outside [-1, 1]: rounding can push |h.w| / (|h| |w|) just past 1 (for h == w, say). "
        "Clamp the cosine into [-1, 1].", value=value))
    expect_that(not (isinstance(value, float) and np.isnan(value)) or bool(hd.norm() * wd.norm() > 0),
                _("cos: you returned NaN. A zero vector has no direction, so |h| |w| = 0: return 0.0 in that case."))
    expect_float(cos, ref_cos, _("cosine of the angle between h and w"), atol=cos_tol, rtol=cos_tol, mistakes=wrong,
                 python=True)
