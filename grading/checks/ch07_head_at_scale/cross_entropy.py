"""Chapter 07: vocab_parallel_cross_entropy and chunked_cross_entropy, values, gradients and memory."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ...model import Case
from ..build import case_with_reference
from ...i18n import N_, _, verbatim
from ..compare import expect_tensor, expect_that
from ..fixtures import course_embedding, course_model, random_ids, random_tensor
from ..memo import Later, evaluated, per_input
from ...techniques import CUSTOM_FUNCTION, LOOP
from .common import PROMPT, TRAIN_TEXT, _arg_shapes, course_logits, split


# ---------------------------------------------------------------- vocab_parallel_cross_entropy


def _ce_case(make_x, world, targets=None, seed=0):
    def make():
        x = make_x() if callable(make_x) else make_x
        t = targets() if callable(targets) else targets
        if t is None:
            t = random_ids(x.shape[-1], (x.shape[0],), seed)
        parts, starts = split(x, world)
        return (parts, t, starts), x
    return make


def _boundary_targets():
    return torch.tensor([0, 10, 11, 21, 22, 31, 32, 41])  # 42 on 4 ranks: [0, 11) [11, 22) [22, 32) [32, 42)


def _padded_vocab():
    x = random_tensor((5, 30), 61, 2.0)
    x[:, 26:] = float("-inf")  # padding rows of the vocabulary never win and are never targets
    x[2, 3] = float("-inf")  # and a masked token that is not the target
    return x


def _course_ce(world):
    def make():
        ids, _, logits = course_logits()
        x = logits[:-1]  # predict token t + 1 from position t
        parts, starts = split(x, world)
        return (parts, ids[1:].clone(), starts), x
    return make


def _dead_slice():
    x = random_tensor((4, 30), 74, 2.0)
    x[1, 10:20] = float("-inf")  # rank 1 of 3 holds only -inf in row 1 (a masked block of the vocabulary)
    return x


def _masked_at_clamp():
    x = random_tensor((3, 30), 75, 2.0)
    x[0, 9] = float("-inf")  # rank 0's last column: where a target past its slice is clamped
    x[1, 20] = float("-inf")  # rank 2's first column: where a target before its slice is clamped
    return x


CE_INPUTS = {
    _("the docstring's example"): lambda: (
        ([torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0]])], torch.tensor([2]), [0, 2]),
        torch.tensor([[1.0, 2.0, 3.0]])),
    _("6 positions, V = 50 on 3 uneven ranks (17, 17, 16)"): _ce_case(
        lambda: random_tensor((6, 50), 62, 2.0), 3, seed=63),
    _("9 positions, V = 61 on 8 ranks"): _ce_case(lambda: random_tensor((9, 61), 64, 2.0), 8, seed=65),
    _("targets on both sides of every boundary, V = 42 on 4 ranks"):
        _ce_case(lambda: random_tensor((8, 42), 66, 2.0), 4, _boundary_targets),
    _("world size 1"): _ce_case(lambda: random_tensor((4, 19), 67), 1, seed=68),
    _("a padded vocabulary: -inf logits on the last rank"): _ce_case(
        _padded_vocab, 3, lambda: torch.tensor([0, 9, 10, 20, 25])),
    _("a rank whose whole slice of a row is -inf (rank 1, row 1)"):
        _ce_case(_dead_slice, 3, lambda: torch.tensor([3, 25, 12, 0])),
    _("masked (-inf) tokens where other ranks clamp the target (rank 0's last column, rank 2's first)"):
        _ce_case(_masked_at_clamp, 3, lambda: torch.tensor([25, 3, 12])),
    _("logits of size ~500 (stable only with the max)"): _ce_case(
        lambda: 500 + random_tensor((4, 33), 69, 30.0), 3, seed=70),
    _("float64 keeps float64"): _ce_case(lambda: random_tensor((5, 29), 72, 2.0, torch.float64), 5, seed=73),
    _("the course model's next-token loss on {prompt}, 8 ranks", prompt=verbatim(repr(PROMPT))): _course_ce(8),
    _("the course model's next-token loss on {prompt}, 5 uneven ranks", prompt=verbatim(repr(PROMPT))): _course_ce(5),
}


def _unscaled(parts, t, x):
    """The ranks' sums of exp added without rescaling each by exp(local max - global max)."""
    m = torch.stack([p.amax(-1) for p in parts])
    s = torch.stack([torch.exp(p - p.amax(-1, keepdim=True)).sum(-1) for p in parts])
    s = torch.where(torch.isneginf(m), torch.zeros_like(s), s)
    return m.amax(0) + torch.log(s.sum(0)) - x.gather(-1, t[:, None])[:, 0]


def _batch_max(parts, t, x):
    """One max over every position and rank as the shift."""
    owners = [p for p in parts if p.shape[-1]]
    big = torch.stack([p.amax() for p in owners]).amax()
    big = torch.where(torch.isinf(big), torch.zeros_like(big), big)
    return big + torch.log(sum(torch.exp(p - big).sum(-1) for p in owners)) - x.gather(-1, t[:, None])[:, 0]


def _owner_one_past(parts, t, starts, lse):
    """The owner test start_r <= t <= start_r + V_r: a target at a shard boundary is also taken from the rank before."""
    total = torch.zeros_like(lse)
    for p, s in zip(parts, starts):
        mine = (t >= s) & (t <= s + p.shape[-1])
        if p.shape[-1]:
            total += torch.where(mine, p.gather(-1, (t - s).clamp(0, p.shape[-1] - 1)[:, None])[:, 0], 0)
    return lse - total


def _target_summed(parts, t, starts, lse, by_product: bool):
    """lse minus the target logit taken from every rank (clamped into its slice): summed as is, or each multiplied
    by its ownership mask (where a non-owner's clamped position is -inf, -inf * 0 is NaN)."""
    total = torch.zeros_like(lse)
    for p, s in zip(parts, starts):
        if p.shape[-1]:
            picked = p.gather(-1, (t - s).clamp(0, p.shape[-1] - 1)[:, None])[:, 0]
            total = total + (picked * ((t >= s) & (t < s + p.shape[-1])).to(p.dtype) if by_product else picked)
    return lse - total


def _check_ce(result, inputs, x):
    parts, t, starts = inputs
    expect_that(isinstance(result, tuple) and len(result) == 2, _("internal: unexpected result format"))
    out, calls = result
    shapes = _arg_shapes(calls)
    N, V = x.shape
    expected = F.cross_entropy(x, t, reduction="none")
    lse = torch.logsumexp(x, dim=-1)
    world = len(parts)
    sizes = [p.shape[-1] for p in parts]

    def even_guess():  # the owner computed as if every rank had V // world rows
        width = V // world
        picked = []
        for i, target in enumerate(t.tolist()):
            r = min(target // width, world - 1)
            local = min(max(target - starts[r], 0), sizes[r] - 1)
            picked.append(parts[r][i, local])
        return lse - torch.stack(picked)

    def global_index_everywhere():  # x_r[i, t] on every rank where t < V_r, summed
        total = torch.zeros(N, dtype=x.dtype)
        for p in parts:
            inside = t < p.shape[-1]
            total += torch.where(inside, p.gather(-1, t.clamp(max=max(p.shape[-1] - 1, 0))[:, None])[:, 0], 0)
        return lse - total

    def first_shard():
        p = parts[0]
        return lse - p.gather(-1, t.clamp(max=p.shape[-1] - 1)[:, None])[:, 0]

    def local_shift():  # each rank shifts by its own max: a rank of -inf only gives exp(-inf - (-inf)) = NaN
        m = torch.stack([p.amax(-1) for p in parts if p.shape[-1]])
        s = torch.stack([torch.exp(p - p.amax(-1, keepdim=True)).sum(-1) for p in parts if p.shape[-1]])
        big = m.amax(0)
        return big + torch.log((s * torch.exp(m - big)).sum(0)) - x.gather(-1, t[:, None])[:, 0]

    def no_shift():
        return torch.log(sum(torch.exp(p).sum(-1) for p in parts)) - x.gather(-1, t[:, None])[:, 0]

    mistakes = [
        (_("a rank whose whole slice of a row is -inf: shifting by that rank's OWN max gives exp(-inf - (-inf)) = "
           "NaN. Shift every rank by the global max (or give such a rank a sum of 0)."), local_shift),
        (_("you took the target logit from every rank (x_r[i, t - start_r], clamped into each slice) and added "
           "them; only the rank with start_r <= t < start_r + V_r owns the target, the others add 0."),
         lambda: _target_summed(parts, t, starts, lse, False)),
        (_("you zeroed the other ranks' target logit by multiplying with the ownership mask: where a rank's clamped "
           "position holds -inf, -inf * 0 is NaN. Select instead: torch.where(mine, picked, 0)."),
         lambda: _target_summed(parts, t, starts, lse, True)),
        (_("your owner test lets the target one past a rank's slice in (t <= start_r + V_r, or local <= V_r): a "
           "target at a shard boundary is then also taken, clamped, from the rank before its owner. Use "
           "start_r <= t < start_r + V_r."), lambda: _owner_one_past(parts, t, starts, lse)),
        (_("you summed exp(x) over the ranks without the max shift: exp overflows to inf for large logits. Take the "
           "global max M first and sum exp(x - M)."), no_shift),
        (_("you took the target logit from the wrong shard: the owner of id t is the rank with "
           "starts[r] <= t < starts[r] + V_r; the shards are not all V // world wide."), even_guess),
        (_("you looked up the target at the GLOBAL index t in every shard; subtract each rank's start and "
           "count it only on the rank that owns t."), global_index_everywhere),
        (_("you took the target logit from the first shard only; it lives on whichever rank owns the target id."),
         first_shard),
        (_("you merged the ranks' sums of exp without rescaling each by exp(local_max - global_max)."),
         lambda: _unscaled(parts, t, x)),
        (_("you shifted by one max for the whole batch (x.amax() over every position): a position whose logits lie "
           "far below the largest one underflows: every exp(x - max) there is 0, and log 0 = -inf. Take the max "
           "per position, amax(dim=-1)."), lambda: _batch_max(parts, t, x)),
        (_("you returned the mean; return one loss per position, shape [N]."), lambda: expected.mean()),
        (_("the sign is flipped: the loss is logsumexp - target logit (>= 0)."), lambda: -expected),
    ]
    tol = dict(atol=1e-4, rtol=1e-5) if x.dtype != torch.float64 else dict(atol=1e-9, rtol=1e-9)
    expect_tensor(out, expected, _("loss per position"), **tol, mistakes=mistakes)
    if world > 1 and V not in sizes:
        full = [s for s in shapes if len(s) >= 1 and s[-1] == V and math.prod(s) >= N * V]
        expect_that(not full, _("Right values, but a tensor of shape {shape} went into a torch function: the full "
                                "[N, V = {V}] logits were built (torch.cat?). Keep them split; each rank sends only a "
                                "max, a sum and (for its own targets) a logit per position.",
                                shape=verbatim(list(full[0]) if full else ''), V=V))


# ---------------------------------------------------------------- chunked_cross_entropy


def _chunk_inputs(N, V, d, chunk, seed, dtype=torch.float32, scale=1.0):
    def build():
        h = random_tensor((N, d), seed, scale, dtype)
        W = random_tensor((V, d), seed + 1, 0.5, dtype)
        return (h, W, random_ids(V, (N,), seed + 2), chunk), None
    return build


def _course_chunk():
    model, tok = course_model()
    ids = tok(TRAIN_TEXT, return_tensors="pt").input_ids
    with torch.no_grad():
        h = model(ids, output_hidden_states=True).hidden_states[-1][0, :-1].float().clone()
    return (h, course_embedding(), ids[0, 1:].clone(), 4), None  # E itself: it travels to the learner by name


CHUNK_VALUE_INPUTS = {
    _("N = 40, V = 97, d = 16, chunk = 8 (divides N)"): _chunk_inputs(40, 97, 16, 8, 81),
    _("chunk = 7 does not divide N = 40 (the last chunk has 5 rows)"): _chunk_inputs(40, 97, 16, 7, 82),
    _("chunk = 64 >= N = 40: a single chunk"): _chunk_inputs(40, 97, 16, 64, 83),
    _("chunk = 1"): _chunk_inputs(9, 37, 6, 1, 84),
    _("float64 keeps float64"): _chunk_inputs(21, 45, 10, 4, 85, torch.float64),
    _("large logits (h scaled by 30): stable only with log_softmax/logsumexp"): _chunk_inputs(
        18, 53, 12, 5, 86, scale=30.0),
    _("the course model's head [49152, 576] on {text}, chunk = 4", text=verbatim(repr(TRAIN_TEXT))): _course_chunk,
}

# Run by the "backward" protocol: loss.backward() in the learner's process, the gradients sent back.
CHUNK_GRAD_INPUTS = {
    _("gradients: N = 24, V = 53, d = 12, chunk = 5"): _chunk_inputs(24, 53, 12, 5, 91),
    _("gradients in float64: N = 10, V = 31, d = 6, chunk = 3"): _chunk_inputs(10, 31, 6, 3, 92, torch.float64),
    _("gradients, one chunk (chunk = 50 >= N = 14)"): _chunk_inputs(14, 29, 9, 50, 93),
    _("gradients, chunk = 4 does not divide N = 30 (V = 41, d = 7)"): _chunk_inputs(30, 41, 7, 4, 94),
    _("gradients, a wide vocabulary: N = 40, V = 211, d = 8, chunk = 4"): _chunk_inputs(40, 211, 8, 4, 95),
    _("gradients, many chunks: N = 192, V = 67, d = 4, chunk = 6"): _chunk_inputs(192, 67, 4, 6, 96),
}


def _is_logits_block(shape, V, d, chunk) -> bool:
    """A [rows, V] (or [V, rows]) tensor with more than `chunk` rows, other than W itself or W.T."""
    if len(shape) != 2 or V not in shape or d in shape:
        return False
    rows = shape[0] if shape[1] == V else shape[1]
    return rows > chunk


def _chunk_value_mistakes(h, W, t, chunk):
    logits = h.double() @ W.double().T
    per_pos = F.cross_entropy(logits, t, reduction="none")
    chunks = per_pos.split(chunk)
    yield (_("you averaged the chunks' means; when chunk does not divide N the last chunk is smaller and gets too much "
             "weight. Sum the per-position losses of every chunk and divide once by N."),
           lambda: torch.stack([c.mean() for c in chunks]).mean())
    yield _("you returned the sum; the loss is the mean over the N positions."), lambda: per_pos.sum()
    yield _("only the first chunk was counted; loop over all of them."), lambda: chunks[0].mean()
    yield (_("you summed the chunks' means (reduction='mean' per chunk, then a sum): divide the total by N."),
           lambda: torch.stack([c.mean() for c in chunks]).sum())
    yield (_("you took log_softmax over the positions (dim 0); it goes over the vocabulary (dim -1)."),
           lambda: -(logits.log_softmax(0).gather(-1, t[:, None])[:, 0]).mean())


@per_input
def _reference_loss(h: torch.Tensor, W: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(h @ W.T, t)


@per_input
def _chunk_loss_mistakes(h: torch.Tensor, W: torch.Tensor, t: torch.Tensor, chunk: int) -> list:
    dtype = _reference_loss(h, W, t).dtype
    return evaluated((m, (lambda w=w: w().to(dtype))) for m, w in _chunk_value_mistakes(h, W, t, chunk))


def _check_chunk_loss(loss, inputs, shapes):
    h, W, t, chunk = inputs
    expected = _reference_loss(h, W, t)
    tol = dict(atol=1e-5, rtol=1e-5) if h.dtype != torch.float64 else dict(atol=1e-10, rtol=1e-10)
    expect_tensor(loss, expected, _("mean cross-entropy"), **tol, check_dtype=True,
                  mistakes=Later(_chunk_loss_mistakes, h, W, t, chunk))
    V, d = W.shape
    big = [s for s in shapes if _is_logits_block(s, V, d, chunk)]
    expect_that(not big, _("Right value, but a tensor of shape {shape} went into a torch function: more than chunk = "
                           "{chunk} rows of the [N, V = {V}] logits at once. Compute the logits chunk by chunk, and "
                           "never put them back together.", shape=verbatim(list(big[0]) if big else ''), chunk=chunk,
                           V=V))


def _check_chunk_value(result, inputs, _ref):
    expect_that(isinstance(result, tuple) and len(result) == 2, _("internal: unexpected result format"))
    _check_chunk_loss(result[0], inputs, _arg_shapes(result[1]))


# What grading/worker/calls/ch07.py reports when an instrument stopped working (the learner's process sends them).
INSTRUMENTS = (N_("saved-tensor hooks or op recorder (already before your call)"), N_("saved-tensor hooks"),
               N_("op recorder"), N_("backward-pass memory meter"))


def _instruments(blind: list) -> str:
    """'a and b' of the instruments that stopped working, each translated (anything else is shown as sent)."""
    names = [_(b) if b in INSTRUMENTS else verbatim(b) for b in blind]
    joined = names[0] if names else ""
    for name in names[1:]:
        joined = _("{first} and {second}", first=joined, second=name)
    return joined


def _check_chunk_grad(result, inputs, _ref):
    expect_that(isinstance(result, tuple) and len(result) == 7 and isinstance(result[6], (int, type(None))),
                _("internal: unexpected result format"))
    loss, grad_h, grad_W, calls, saved, blind, peak = result
    h, W, t, chunk = inputs
    expect_that(not blind, _("The judge could not watch your function: its {instruments} stopped working during "
                             "the call (replaced or removed: torch.autograd.graph.saved_tensors_hooks, "
                             "torch._C._autograd's saved-tensor hooks, torch function modes). Graded code must leave "
                             "the judge's instruments alone; this case fails.", instruments=_instruments(blind)))
    _check_chunk_loss(loss, inputs, _arg_shapes(calls))
    expect_that(grad_h is not None and grad_W is not None,
                _("Right value, but the loss has no gradient for h and W: it was computed under torch.no_grad(), "
                  "detached, or rebuilt from .item(). It must come out of autograd (or a torch.autograd.Function) so "
                  "that loss.backward() reaches h and W."))
    h_ref = h.clone().requires_grad_(True)
    W_ref = W.clone().requires_grad_(True)
    F.cross_entropy(h_ref @ W_ref.T, t).backward()  # autograd on the one-shot loss is the reference
    tol = dict(atol=1e-6, rtol=1e-4) if h.dtype != torch.float64 else dict(atol=1e-12, rtol=1e-10)
    n_chunks = -(-h.shape[0] // chunk)
    expect_tensor(grad_h, h_ref.grad, "h.grad", **tol, mistakes=[
        (_("h.grad is N times too large: the loss was a sum, not a mean."), lambda: h_ref.grad * h.shape[0]),
        (_("h.grad is scaled by the number of chunks: divide the summed loss by N once."),
         lambda: h_ref.grad * n_chunks),
    ])
    expect_tensor(grad_W, W_ref.grad, "W.grad", **tol)
    V, d = W.shape
    N = h.shape[0]
    kept = [tuple(s) for s in saved if _is_logits_block(tuple(s), V, d, 0)]
    rows = sum(math.prod(s) // V for s in kept)
    total = sum(math.prod(s) for s in saved)  # everything autograd keeps, however it is shaped
    budget = 3 * chunk * V + 2 * (N + V) * d  # a few chunks of logits, plus copies of h and W
    expect_that(total <= budget, _("Right values and gradients, but autograd kept {total:,} numbers alive for the "
                                   "backward pass, more than {budget:,} (a few [chunk = {chunk}, V = {V}] blocks plus "
                                   "h and W): the logits of the whole batch are being saved, in one shape or another. "
                                   "Recompute each chunk in the backward pass (torch.utils.checkpoint), or write a "
                                   "torch.autograd.Function whose backward computes the gradient chunk by chunk.",
                                   total=total, budget=budget, chunk=chunk, V=V))
    expect_that(rows <= 2 * chunk, _("Right values and gradients, but autograd kept {rows} rows of [rows, V = {V}] "
                                     "tensors alive for the backward pass (chunk = {chunk}): every chunk's logits or "
                                     "log-probabilities stay in memory until backward, so the loop still holds N x V "
                                     "numbers. Recompute each chunk in the backward pass (torch.utils.checkpoint), or "
                                     "write a torch.autograd.Function whose backward computes the gradient chunk by "
                                     "chunk.",
                                     rows=rows, V=V, chunk=chunk))
    held = 4 * min(chunk, N) * V + 4 * (N + V) * d  # a few chunks' blocks, plus h, W and their gradients
    expect_that(peak <= held, _("Right values and gradients, but the backward pass held {peak:,} numbers at once, more "
                                "than {budget:,} (a few [chunk = {chunk}, V = {V}] blocks plus h, W and their "
                                "gradients): it rebuilt the logits of many chunks before letting any go (a single "
                                "checkpoint around the whole loop does that). Checkpoint each chunk on its own, or "
                                "write a torch.autograd.Function whose backward computes the gradient chunk by chunk.",
                                peak=peak, budget=held, chunk=chunk, V=V))


def chunks_in_source(facts: frozenset, call: str) -> str:
    """chunked_cross_entropy's technique, in the learner's own source (grading/techniques.py): a loop over
    chunks, and for the gradient cases checkpoint or a torch.autograd.Function of one's own."""
    if call == "record_ops" and LOOP not in facts:
        return _("Right value, but the judge's own reading of your file finds no loop (for, while, a comprehension "
                 "or map) in chunked_cross_entropy or the functions it calls: the logits cannot go chunk by chunk "
                 "without one.")
    if call == "backward" and not (LOOP in facts and ({"checkpoint", CUSTOM_FUNCTION} & facts)):
        return _("Right values and gradients, but the judge's own reading of your file finds no loop with "
                 "checkpoint(...) or a torch.autograd.Function with its own backward in chunked_cross_entropy or "
                 "the functions it calls: without one, autograd keeps every chunk's logits for the backward pass.")
    return ""


def _chunk_cases() -> list[Case]:
    return ([case_with_reference(n, b, _check_chunk_value, "record_ops") for n, b in CHUNK_VALUE_INPUTS.items()]
            + [case_with_reference(n, b, _check_chunk_grad, "backward") for n, b in CHUNK_GRAD_INPUTS.items()])
