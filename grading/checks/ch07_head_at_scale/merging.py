"""Chapter 07: merge_logsumexp, vocab_parallel_argmax and merge_top_k from each rank's partial results."""
from __future__ import annotations

import torch

from ...i18n import _, verbatim
from ..compare import expect_tensor, expect_tuple
from ..fixtures import random_tensor
from .common import PROMPT, course_logits, split


# ---------------------------------------------------------------- merge_logsumexp


def _local_stats(x: torch.Tensor, world: int, nan_for_empty: bool = True):
    """Each rank's (max, sum of exp(x - max)) over its slice of the last dim, stacked: [world, *S] each."""
    parts, _ = split(x, world)
    maxes, sums = [], []
    for p in parts:
        if p.shape[-1] == 0:
            m = torch.full(p.shape[:-1], float("-inf"), dtype=x.dtype)
            s = torch.zeros(p.shape[:-1], dtype=x.dtype)
        else:
            m = p.amax(dim=-1)
            s = torch.exp(p - m.unsqueeze(-1)).sum(dim=-1)  # NaN where the slice is all -inf
        if not nan_for_empty:
            s = torch.where(torch.isneginf(m), torch.zeros_like(s), s)
        maxes.append(m)
        sums.append(s)
    return torch.stack(maxes), torch.stack(sums)


def _lse_case(x, world, nan_for_empty=True):
    def make():
        full = x() if callable(x) else x
        m, s = _local_stats(full, world, nan_for_empty)
        return (m, s), full
    return make


def _with_padding_shard(nan: bool):
    def make():
        x = random_tensor((3, 40), 31, 3.0)
        x[:, 30:] = float("-inf")  # the last of 4 ranks holds only padding (Megatron pads V to a multiple)
        m, s = _local_stats(x, 4, nan_for_empty=nan)
        return (m, s), x
    return make


def _with_dead_row():
    x = random_tensor((3, 25), 32, 2.0)
    x[1] = float("-inf")
    return x


LSE_INPUTS = {
    _("the docstring's example [1, 2 | 3]"): _lse_case(torch.tensor([1.0, 2.0, 3.0]), 2),
    _("random logits, V = 100 on 3 uneven ranks"): _lse_case(lambda: random_tensor((100,), 21, 3.0), 3),
    _("a batch [4, 7, V = 50] on 8 ranks"): _lse_case(lambda: random_tensor((4, 7, 50), 22, 2.0), 8),
    _("world size 1"): _lse_case(lambda: random_tensor((5, 16), 23), 1),
    _("logits of size ~1000 (exp overflows without the max)"): _lse_case(
        lambda: 1000 + random_tensor((2, 30), 24, 50.0), 4),
    _("negative logits of size ~-1000 (exp underflows to 0 without the max)"):
        _lse_case(lambda: -1000 + random_tensor((2, 30), 25, 5.0), 3),
    _("one rank holds only -inf (padding), its sum reported as 0"): _with_padding_shard(nan=False),
    _("one rank holds only -inf, its sum reported as NaN (exp(-inf - (-inf)))"): _with_padding_shard(nan=True),
    _("a row that is -inf everywhere gives -inf"): _lse_case(_with_dead_row, 3),
    _("float64 keeps float64"): _lse_case(lambda: random_tensor((6, 33), 26, 4.0, torch.float64), 5),
    _("the course model's logits for {prompt}, all positions, on 8 ranks", prompt=verbatim(repr(PROMPT))): _lse_case(
        lambda: course_logits()[2], 8),
}


def _check_lse(out, inputs, x):
    m, s = inputs
    expected = torch.logsumexp(x, dim=-1)
    big = m.amax(0)
    clean = torch.where(torch.isneginf(m), torch.zeros_like(s), s)
    tol = dict(atol=1e-4, rtol=1e-5) if x.dtype != torch.float64 else dict(atol=1e-9, rtol=1e-9)

    def zero_max():  # a -inf max read as 0: the shift is never below 0
        m0 = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
        shift = m0.amax(0)
        return shift + torch.log((clean * torch.exp(m0 - shift)).sum(0))

    expect_tensor(out, expected, _("global log-sum-exp"), **tol, mistakes=[
        (_("you merged the sums of exp without rescaling them by the max: rank r's sum is relative to ITS max, "
           "so multiply it by exp(local_max[r] - global_max) before adding."), lambda: big + torch.log(clean.sum(0))),
        (_("you added the sums and took the log, forgetting the max altogether: log(sum_r s_r) is the log-sum-exp "
           "only when every local max is 0."), lambda: torch.log(clean.sum(0))),
        (_("you took the largest per-rank log-sum-exp; the ranks' shares add up: combine them, do not pick one."),
         lambda: (m + torch.log(clean)).amax(0)),
        (_("you added the per-rank log-sum-exps; add the exponentials, not their logs."),
         lambda: (m + torch.log(clean)).sum(0)),
        (_("you computed log(sum_r s_r * exp(local_max[r])) directly: exp overflows (or underflows) for large "
           "logits. Factor out the global max: M + log(sum_r s_r * exp(m_r - M))."),
         lambda: torch.log((clean * torch.exp(m)).sum(0))),
        (_("a rank (or a whole row) of -inf turned into NaN (exp(-inf - (-inf)) is NaN, and so may be the sum such "
           "a rank reports). Skip ranks whose max is -inf, and return -inf where every rank is -inf."), lambda: big + torch.log((s * torch.exp(m - big)).sum(0))),
        (_("you replaced a -inf local max by 0 before taking the global max: where every finite rank lies far "
           "below 0, the shift becomes 0 and their sums underflow to 0 (log 0 = -inf). Take the max over the ranks "
           "as they are, and replace only a max that is still -inf."), lambda: zero_max()),
    ])


# ---------------------------------------------------------------- vocab_parallel_argmax


def _argmax_inputs(x: torch.Tensor, world: int):
    parts, starts = split(x, world)
    values, indices = [], []
    for p in parts:
        if p.shape[-1] == 0:
            values.append(torch.full(p.shape[:-1], float("-inf"), dtype=x.dtype))
            indices.append(torch.zeros(p.shape[:-1], dtype=torch.long))
        else:
            v, i = p.max(dim=-1)  # the first maximal index of each slice
            values.append(v)
            indices.append(i)
    return (torch.stack(values), torch.stack(indices), torch.tensor(starts)), x


def _ties_across_ranks():
    x = random_tensor((4, 30), 41, 1.0)
    x[0, [3, 17]] = 5.0  # ranks 0 and 1 of 3 (10 rows each) share the maximum
    x[1, [12, 25, 29]] = 7.0  # ranks 1 and 2
    x[2, [20, 9]] = 6.0  # rank 2's tie is the larger id; rank 0's the smaller
    x[3] = 2.0  # every token tied: id 0
    return _argmax_inputs(x, 3)


def _argmax_case(make_x, world):
    return lambda: _argmax_inputs(make_x() if callable(make_x) else make_x, world)


def _minus_inf_rows():
    x = random_tensor((3, 21), 42, 1.0)
    x[0, :15] = float("-inf")  # ranks 0 and 1 hold only -inf here
    x[1] = float("-inf")  # the whole row: torch.argmax says 0
    return x


def _integer_ties():
    return torch.randint(0, 3, (6, 40), generator=torch.Generator().manual_seed(43)).float()


def _close_maxima():
    x = random_tensor((3, 100), 50, 1.0).clamp(max=2.0)
    x[0, 2], x[0, 95] = 5.0, 5.0 + 4e-6  # close but unequal, on ranks 0 and 2: the larger (id 95) wins
    x[1, 7], x[1, 88] = 8.03123, 8.03128  # isclose calls them equal; bfloat16 rounds them apart (8.0, 8.0625)
    x[2, 5], x[2, 71] = 6.0, 6.01  # equal once rounded to bfloat16 (6.0), not close for isclose
    return x


ARGMAX_INPUTS = {
    _("the docstring's example"): lambda: (
        (torch.tensor([[2.0], [5.0]]), torch.tensor([[3], [1]]), torch.tensor([0, 10])),
        torch.cat([torch.full((1, 3), 1.0), torch.tensor([[2.0]]), torch.zeros(1, 6),
                   torch.zeros(1, 1), torch.tensor([[5.0]]), torch.zeros(1, 1)], -1)),
    _("random logits, V = 100 on 3 uneven ranks"): _argmax_case(lambda: random_tensor((1, 100), 44, 2.0), 3),
    _("a batch [5, 61] on 8 ranks"): _argmax_case(lambda: random_tensor((5, 61), 45, 2.0), 8),
    _("ties across ranks: the smallest global id wins"): _ties_across_ranks,
    _("many ties (values 0, 1, 2) on 5 ranks"): _argmax_case(_integer_ties, 5),
    _("close but unequal maxima on far-apart ids of different ranks: the larger value wins"):
        _argmax_case(_close_maxima, 3),
    _("-inf entries, a row that is -inf everywhere"): _argmax_case(_minus_inf_rows, 3),
    _("V = 5 on 8 ranks: ranks without rows report -inf"): _argmax_case(lambda: random_tensor((2, 5), 46), 8),
    _("world size 1"): _argmax_case(lambda: random_tensor((3, 9), 47), 1),
    _("a batch of shape [2, 3, 40] on 4 ranks"): _argmax_case(lambda: random_tensor((2, 3, 40), 48), 4),
    _("float64 logits"): _argmax_case(lambda: random_tensor((4, 33), 49, 1.0, torch.float64), 3),
    _("greedy decoding of the course model at every position of {prompt}, 8 ranks", prompt=verbatim(repr(PROMPT))):
        _argmax_case(lambda: course_logits()[2], 8),
}


def _check_argmax(out, inputs, x):
    values, indices, starts = inputs
    expected = x.argmax(dim=-1)  # ties: the first maximal index
    shape = (-1,) + (1,) * (values.dim() - 1)
    global_ids = indices + starts.reshape(shape)
    best = values.argmax(0, keepdim=True)
    is_max = values == values.amax(0, keepdim=True)
    last_rank = (values.shape[0] - 1) - is_max.flip(0).long().argmax(0, keepdim=True)
    big = torch.iinfo(torch.long).max

    def smallest_id_among(tied):
        return torch.where(tied, global_ids, torch.full_like(global_ids, big)).amin(0)

    def starts_on_batch_axis():  # position j of the batch gets rank j's start
        winner = indices.gather(0, best)[0]
        n = winner.shape[-1] if winner.dim() else 1
        return winner + starts[:n] if n <= starts.shape[0] else None

    rounded = values.to(torch.bfloat16)
    expect_tensor(out, expected, _("global token id"), atol=0, rtol=0, mistakes=[
        (_("you returned the LOCAL index of the winning rank; add that rank's start to get the token id."),
         lambda: indices.gather(0, best)[0]),
        (_("you returned the winning RANK; return the token id (start of that rank + its local index)."),
         lambda: best[0]),
        (_("ties across ranks went to the larger id; like torch.argmax, take the smallest id among equal maxima."),
         lambda: global_ids.gather(0, last_rank)[0]),
        (_("you added the starts, but then picked the largest id, not the largest VALUE."), lambda: global_ids.amax(0)),
        (_("you treated close maxima as ties (torch.isclose, or a tolerance): only exactly equal values tie; a "
           "slightly larger logit wins even if its id is far larger."),
         lambda: smallest_id_among(torch.isclose(values, values.amax(0, keepdim=True)) | is_max)),
        (_("you rounded the maxima (to bfloat16/float16, or to a few decimals) before comparing them: values that "
           "differ only after rounding became ties. Compare them as they are."),
         lambda: smallest_id_among(rounded == rounded.amax(0, keepdim=True))),
        (_("you added the starts along the batch axis (position j got rank j's start); each position's winner "
           "needs the start of ITS rank: reshape starts to [world, 1, ...] so it broadcasts over axis 0."),
         starts_on_batch_axis),
    ])


# ---------------------------------------------------------------- merge_top_k


def _local_top(x: torch.Tensor, world: int, k_local: int, shuffle_seed: int | None = None):
    """Each rank's k_local best, ordered by value with ties by LARGER local id first (any order is allowed)."""
    parts, starts = split(x, world)
    values, indices = [], []
    g = torch.Generator().manual_seed(shuffle_seed or 0)
    for p in parts:
        reversed_ids = torch.arange(p.shape[-1] - 1, -1, -1)
        order = p[..., reversed_ids].argsort(dim=-1, descending=True, stable=True)[..., :k_local]
        local = reversed_ids[order]
        if shuffle_seed is not None:
            perm = torch.randperm(k_local, generator=g)
            local = local[..., perm]
        values.append(p.gather(-1, local))
        indices.append(local)
    return torch.stack(values), torch.stack(indices), torch.tensor(starts)


def _topk_case(make_x, world, k, k_local=None, shuffle=None):
    def make():
        x = make_x() if callable(make_x) else make_x
        v, i, s = _local_top(x, world, k_local or k, shuffle)
        return (v, i, s, k), x
    return make


def _mostly_masked():
    x = torch.full((2, 24), float("-inf"))
    x[0, [2, 9, 17, 20, 23]] = torch.tensor([0.5, 1.5, -0.5, 1.5, 3.0])
    x[1, [0, 11]] = torch.tensor([1.0, 2.0])
    return x


def _example_topk():
    x = torch.full((200,), -10.0)
    x[[0, 5, 101, 102]] = torch.tensor([9.0, 4.0, 9.0, 7.0])
    return (torch.tensor([[9.0, 4.0], [7.0, 9.0]]), torch.tensor([[0, 5], [2, 1]]), torch.tensor([0, 100]), 2), x


TOPK_INPUTS = {
    _("the docstring's example"): _example_topk,
    _("random logits, V = 100 on 3 uneven ranks, k = 5"): _topk_case(lambda: random_tensor((100,), 51, 2.0), 3, 5),
    _("a batch [2, 3, 43] on 4 ranks, k = 4"): _topk_case(lambda: random_tensor((2, 3, 43), 52), 4, 4),
    _("ties across ranks (values 0 .. 3), k = 6: equal values by smaller id"): _topk_case(
        lambda: torch.randint(0, 4, (3, 30), generator=torch.Generator().manual_seed(53)).float(), 3, 6),
    _("-inf entries: fewer finite logits than k, the -inf ones by smaller id"): _topk_case(_mostly_masked, 3, 8),
    _("world size 1, k = 4"): _topk_case(lambda: random_tensor((2, 12), 54), 1, 4),
    _("8 ranks, V = 64, k = 3"): _topk_case(lambda: random_tensor((3, 64), 55), 8, 3),
    _("ranks sent their top 8, k = 5"): _topk_case(lambda: random_tensor((2, 50), 56), 3, 5, k_local=8),
    _("each rank's list in shuffled order"): _topk_case(lambda: random_tensor((2, 45), 57), 3, 6, shuffle=58),
    _("float64, k = 1"): _topk_case(lambda: random_tensor((4, 27), 59, 1.0, torch.float64), 3, 1),
    _("top-10 of the course model's next-token logits for {prompt}, 8 ranks", prompt=verbatim(repr(PROMPT))):
        _topk_case(lambda: course_logits()[2][-1], 8, 10),
}


def _stable_top(values: torch.Tensor, ids: torch.Tensor, k: int, smaller_first: bool = True):
    by_id = ids.argsort(dim=-1, descending=not smaller_first, stable=True)
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    order = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, order), ids.gather(-1, order)


def _check_topk(out, inputs, x):
    lv, li, starts, k = inputs
    order = torch.sort(x, dim=-1, descending=True, stable=True).indices[..., :k]  # ties: smaller id first
    exp_values, exp_ids = x.gather(-1, order), order
    shape = (-1,) + (1,) * (lv.dim() - 1)
    gids = li + starts.reshape(shape)
    flat_v = torch.movedim(lv, 0, -2).flatten(-2)
    flat_i = torch.movedim(gids, 0, -2).flatten(-2)
    flat_local = torch.movedim(li, 0, -2).flatten(-2)
    values, ids = expect_tuple(out, 2, _("merge_top_k's result (values, ids)"))
    id_mistakes = [
        (_("you returned LOCAL indices; add each rank's start to its indices before merging."),
         lambda: _stable_top(flat_v, flat_local, k)[1]),
        (_("equal values came out larger id first; order ties by the smaller global id."),
         lambda: _stable_top(flat_v, flat_i, k, smaller_first=False)[1]),
        (_("you took the first k entries of the concatenated lists without sorting them by value."),
         lambda: flat_i[..., :k]),
    ]
    topk_ids = flat_i.gather(-1, flat_v.topk(k, dim=-1).indices)
    if not torch.equal(topk_ids, exp_ids):
        id_mistakes.append((_("torch.topk does not promise any order among equal values: sort by id first, then "
                              "stably by value (or use a stable sort with both keys)."), topk_ids))
    expect_tensor(values, exp_values, _("top-{k} values", k=k), atol=0, rtol=0, mistakes=[
        (_("you took the first k entries of the concatenated lists without sorting them by value."),
         lambda: flat_v[..., :k]),
        (_("the values are in ascending order; largest first."), lambda: exp_values.flip(-1)),
    ])
    expect_tensor(ids, exp_ids, _("top-{k} token ids", k=k), atol=0, rtol=0, mistakes=id_mistakes)
