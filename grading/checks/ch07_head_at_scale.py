"""Checks for chapter 07, the embedding and the head at scale (exercises/ch07_head_at_scale.py).

Every reference is unsharded: the inputs are built by cutting one full tensor (random, or the course
model's own E and logits) into rank slices with torch.tensor_split, and the learner's merged result is
compared with what torch computes on the whole tensor (F.embedding, torch.logsumexp, torch.argmax, a stable
sort, F.cross_entropy and autograd). The slices use uneven widths, world sizes 1, 2, 3, 5 and 8, ranks that
own no rows, ties across ranks, -inf entries and batch shapes, so the notebook's two-rank demonstration
does not pass as it is.
"""
from __future__ import annotations

import math
from functools import lru_cache

import torch
import torch.nn.functional as F
from .compare import CheckFailed, expect_float, expect_tensor, expect_that, expect_tuple
from .fixtures import course_embedding, course_ids, course_model, random_ids, random_table, random_tensor
from ..worker.calls import PROTOCOLS
from ..model import Case, Chapter, Exercise, Question

PROMPT = "The capital of France is"
TRAIN_TEXT = "The cat sat on the mat because it was warm."

# ---------------------------------------------------------------- references shared by the checks


def ranges(vocab: int, world: int) -> list[tuple[int, int]]:
    """[start, end) of each rank: torch.tensor_split gives the first V % w parts one extra element."""
    parts = torch.arange(vocab).tensor_split(world)
    out, start = [], 0
    for p in parts:
        out.append((start, start + len(p)))
        start += len(p)
    return out


def split(x: torch.Tensor, world: int) -> tuple[list[torch.Tensor], list[int]]:
    """Rank slices of the last dim of x (contiguous copies, as each rank would hold them) and their starts."""
    rs = ranges(x.shape[-1], world)
    return [x[..., s:e].clone() for s, e in rs], [s for s, _ in rs]


@lru_cache(maxsize=1)
def course_logits(prompt: str = PROMPT) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids [T], final hidden states [T, d] after the final norm, logits [T, V]) of the course model."""
    model, tok = course_model()
    ids = tok(prompt, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model(ids, output_hidden_states=True)
    return ids[0], out.hidden_states[-1][0].float().clone(), out.logits[0].float().clone()


def _case(name: str, build, check, call: str = "call") -> Case:
    """A case whose builder returns (the learner's inputs, judge-only reference data).

    Both run in the judge's process only (the learner's process receives the pickled inputs); the
    check rebuilds the reference data, which is cheap (course-model tensors are cached).
    """
    return Case(name, lambda: build()[0], lambda out, inputs: check(out, inputs, build()[1]), call)


def _arg_shapes(calls) -> list[tuple[int, ...]]:
    """Every tensor-argument shape seen by the record_ops protocol."""
    return [tuple(shape) for _name, shapes in calls for shape in shapes]


# ---------------------------------------------------------------- shard_range

SHARD_INPUTS = {
    "the docstring's example: V = 10 over 3 ranks, rank 0 (4 rows)": (10, 3, 0),
    "V = 10 over 3 ranks, rank 1": (10, 3, 1),
    "V = 10 over 3 ranks, rank 2 (the last)": (10, 3, 2),
    "the course model: V = 49,152 over 2 ranks, rank 1": (49152, 2, 1),
    "the course model over 8 ranks, rank 5": (49152, 8, 5),
    "Qwen3-0.6B's V = 151,936 over 3 ranks (uneven), rank 1": (151936, 3, 1),
    "V = 151,936 over 3 ranks, rank 2": (151936, 3, 2),
    "GPT-2's V = 50,257 over 8 ranks, rank 0 (the one extra row)": (50257, 8, 0),
    "V = 50,257 over 8 ranks, rank 7": (50257, 8, 7),
    "V = 100 over 7 ranks (two extra rows), rank 1": (100, 7, 1),
    "V = 100 over 7 ranks, rank 2 (the first without an extra row)": (100, 7, 2),
    "V = 100 over 7 ranks, rank 6": (100, 7, 6),
    "world size 1: one rank owns everything": (7, 1, 0),
    "more ranks than tokens: V = 3 over 8 ranks, rank 2 (the last with a row)": (3, 8, 2),
    "V = 3 over 8 ranks, rank 5: an empty range [3, 3)": (3, 8, 5),
    "V = 13 over 13 ranks, rank 12: one row each": (13, 13, 12),
}


def _check_shard(out, inputs):
    vocab, world, rank = inputs
    expected = ranges(vocab, world)[rank]
    base, extra = divmod(vocab, world)
    ceil = -(-vocab // world)
    s, e = expected
    rev = ranges(vocab, world)[world - 1 - rank]
    mistakes = [
        ("each rank got ceil(V / world) rows and the last ones what is left (Megatron's padded layout); here the "
         "first V % world ranks get ONE extra row each.", (min(rank * ceil, vocab), min((rank + 1) * ceil, vocab))),
        ("every rank got V // world rows and the last one the whole remainder; spread it: one extra row for each "
         "of the first V % world ranks.", (rank * base, (rank + 1) * base if rank < world - 1 else vocab)),
        ("the extra rows went to the LAST ranks; they go to the first V % world ranks.", (vocab - rev[1], vocab - rev[0])),
        ("your end is inclusive; the range is [start, end): end = start + number of rows.", (s, e - 1)),
        ("you returned (start, number of rows); return (start, end).", (s, e - s)),
        ("the start ignores the extra rows of the ranks before: start = rank * (V // world) + min(rank, V % world).",
         (rank * base, rank * base + base + (rank < extra))),
    ]
    what = f"shard_range({vocab}, {world}, {rank})"
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise CheckFailed(f"{what}: return a tuple (start, end) of two ints, got {type(out).__name__}.")
    kinds = sorted({type(v).__name__ for v in out})
    expect_that(all(type(v) is int for v in out),
                f"{what}: return two Python ints, got {kinds} (int(...) turns a 0-d tensor into one).")
    got = tuple(out)
    if got == expected:
        return
    msg = f"{what}: expected {expected}, got {got}."
    for explanation, wrong in mistakes:
        if got == wrong:
            raise CheckFailed(msg + f"\n  Likely mistake: {explanation}")
    raise CheckFailed(msg + f" The ranges of all ranks must be consecutive, cover [0, {vocab}) exactly, and "
                            "differ in size by at most one row, the larger ones first.")


# ---------------------------------------------------------------- vocab_parallel_lookup


def _example_table():
    return torch.arange(12.0).reshape(6, 2)


def _course_batch_ids():
    return torch.stack([course_ids("The cat sat on the"), random_ids(49152, (5,), 71)])


# (table, ids, world size, the ranks to grade): every rank's part is one case
LOOKUP_SETUPS = [
    ("the docstring's table E = arange(12).reshape(6, 2), ids [1, 2, 3, 5], 3 ranks",
     _example_table, lambda: torch.tensor([1, 2, 3, 5]), 3, (0, 1, 2)),
    ("every id of a 10 x 4 table on 3 uneven ranks (4, 3, 3 rows)",
     lambda: random_table(10, 4, 1), lambda: torch.arange(10), 3, (0, 2)),
    ("2-D ids [2, 5], V = 50 on 4 ranks (13, 13, 12, 12 rows)",
     lambda: random_table(50, 8, 2), lambda: random_ids(50, (2, 5), 3), 4, (1, 3)),
    ("a single 0-d id, 2 ranks", lambda: random_table(12, 4, 4), lambda: torch.tensor(7), 2, (0, 1)),
    ("empty ids, 2 ranks", lambda: random_table(12, 4, 5), lambda: torch.zeros(0, dtype=torch.long), 2, (1,)),
    ("ids on both sides of every boundary, V = 20 on 3 ranks (7, 7, 6 rows)",
     lambda: random_table(20, 3, 6), lambda: torch.tensor([0, 6, 7, 8, 13, 14, 15, 19]), 3, (1,)),
    ("float16 table keeps float16, 3 ranks",
     lambda: random_table(21, 8, 7, torch.float16), lambda: random_ids(21, (9,), 8), 3, (2,)),
    ("bfloat16 table, 3-D ids, 8 ranks (3 or 2 rows each)",
     lambda: random_table(20, 8, 9, torch.bfloat16), lambda: random_ids(20, (2, 2, 3), 10), 8, (3, 6)),
    ("V = 5 on 8 ranks: ranks 5-7 own no rows",
     lambda: random_table(5, 4, 11), lambda: torch.tensor([4, 0, 2, 3, 1]), 8, (4, 6)),
    ("world size 1", lambda: random_table(9, 4, 12), lambda: random_ids(9, (6,), 13), 1, (0,)),
    ("the course model's E [49152, 576] on 8 ranks, 'The cat sat on the'",
     course_embedding, lambda: course_ids("The cat sat on the"), 8, (0,)),
    ("the course model's E on 8 ranks, a batch [2, 5] of ids", course_embedding, _course_batch_ids, 8, (7,)),
]


def _lookup_build(table, make_ids, world, rank):
    def build():
        E, ids = table(), make_ids()
        s, e = ranges(E.shape[0], world)[rank]
        return (E[s:e].clone(), ids, s), (E, ids, s, e)
    return build


def _lookup_mistakes(shard, ids, s, e, E):
    n, d = shard.shape

    def rows(index):
        return shard[index] if n else shard.new_zeros(*ids.shape, d)

    inside = ((ids >= s) & (ids < e)).unsqueeze(-1)
    yield ("you forgot to zero the masked rows: ids this rank does not own were clamped (or replaced) to a valid "
           "row and looked up, but that borrowed row must be set to 0, or the sum over ranks counts it.",
           lambda: rows((ids - s).clamp(0, max(n - 1, 0))))
    yield ("you replaced the ids this rank does not own by 0 and looked them up, but did not zero those rows "
           "afterwards: every rank adds its row 0 to the sum.", lambda: rows(torch.where(inside[..., 0], ids - s, 0)))
    yield ("you indexed the shard with the global id; subtract start first (global id start is row 0 of the shard).",
           lambda: torch.where(inside, rows(ids.clamp(0, max(n - 1, 0))), 0))
    yield ("the end of the range is exclusive: id start + len(E_shard) belongs to the next rank.",
           lambda: torch.where(((ids >= s) & (ids <= e)).unsqueeze(-1), rows((ids - s).clamp(0, max(n - 1, 0))), 0))
    yield "you returned the full lookup E[ids]; each rank returns only its own rows (and zeros).", lambda: E[ids]


def _check_lookup(out, inputs, ref):
    shard, ids, start = inputs
    E, ids, s, e = ref
    inside = ((ids >= s) & (ids < e)).unsqueeze(-1)
    expected = torch.where(inside, F.embedding(ids, E), torch.zeros((), dtype=E.dtype))  # torch's own lookup of E
    expect_tensor(out, expected, f"the part of the rank owning rows [{s}, {e})", atol=0, rtol=0,
                  mistakes=list(_lookup_mistakes(shard, ids, s, e, E)))


def _lookup_cases() -> list[Case]:
    cases = []
    for name, table, make_ids, world, ranks in LOOKUP_SETUPS:
        for rank in ranks:
            cases.append(_case(f"{name}: rank {rank}", _lookup_build(table, make_ids, world, rank), _check_lookup))
    return cases


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
    "the docstring's example [1, 2 | 3]": _lse_case(torch.tensor([1.0, 2.0, 3.0]), 2),
    "random logits, V = 100 on 3 uneven ranks": _lse_case(lambda: random_tensor((100,), 21, 3.0), 3),
    "a batch [4, 7, V = 50] on 8 ranks": _lse_case(lambda: random_tensor((4, 7, 50), 22, 2.0), 8),
    "world size 1": _lse_case(lambda: random_tensor((5, 16), 23), 1),
    "logits of size ~1000 (exp overflows without the max)": _lse_case(lambda: 1000 + random_tensor((2, 30), 24, 50.0), 4),
    "negative logits of size ~-1000 (exp underflows to 0 without the max)":
        _lse_case(lambda: -1000 + random_tensor((2, 30), 25, 5.0), 3),
    "one rank holds only -inf (padding), its sum reported as 0": _with_padding_shard(nan=False),
    "one rank holds only -inf, its sum reported as NaN (exp(-inf - (-inf)))": _with_padding_shard(nan=True),
    "a row that is -inf everywhere gives -inf": _lse_case(_with_dead_row, 3),
    "float64 keeps float64": _lse_case(lambda: random_tensor((6, 33), 26, 4.0, torch.float64), 5),
    f"the course model's logits for {PROMPT!r}, all positions, on 8 ranks": _lse_case(lambda: course_logits()[2], 8),
}


def _check_lse(out, inputs, x):
    m, s = inputs
    expected = torch.logsumexp(x, dim=-1)
    big = m.amax(0)
    clean = torch.where(torch.isneginf(m), torch.zeros_like(s), s)
    tol = dict(atol=1e-4, rtol=1e-5) if x.dtype != torch.float64 else dict(atol=1e-9, rtol=1e-9)
    expect_tensor(out, expected, "global log-sum-exp", **tol, mistakes=[
        ("you merged the sums of exp without rescaling them by the max: rank r's sum is relative to ITS max, "
         "so multiply it by exp(local_max[r] - global_max) before adding.", lambda: big + torch.log(clean.sum(0))),
        ("you added the sums and took the log, forgetting the max altogether: log(sum_r s_r) is the log-sum-exp "
         "only when every local max is 0.", lambda: torch.log(clean.sum(0))),
        ("you took the largest per-rank log-sum-exp; the ranks' shares add up: combine them, do not pick one.",
         lambda: (m + torch.log(clean)).amax(0)),
        ("you added the per-rank log-sum-exps; add the exponentials, not their logs.",
         lambda: (m + torch.log(clean)).sum(0)),
        ("you computed log(sum_r s_r * exp(local_max[r])) directly: exp overflows (or underflows) for large logits. "
         "Factor out the global max: M + log(sum_r s_r * exp(m_r - M)).", lambda: torch.log((clean * torch.exp(m)).sum(0))),
        ("a rank (or a whole row) of -inf: exp(-inf - (-inf)) is NaN. Skip ranks whose max is -inf, and return -inf "
         "where every rank is -inf.", lambda: big + torch.log((s * torch.exp(m - big)).sum(0))),
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


ARGMAX_INPUTS = {
    "the docstring's example": lambda: ((torch.tensor([[2.0], [5.0]]), torch.tensor([[3], [1]]), torch.tensor([0, 10])),
                                        torch.cat([torch.full((1, 3), 1.0), torch.tensor([[2.0]]), torch.zeros(1, 6),
                                                   torch.zeros(1, 1), torch.tensor([[5.0]]), torch.zeros(1, 1)], -1)),
    "random logits, V = 100 on 3 uneven ranks": _argmax_case(lambda: random_tensor((1, 100), 44, 2.0), 3),
    "a batch [5, 61] on 8 ranks": _argmax_case(lambda: random_tensor((5, 61), 45, 2.0), 8),
    "ties across ranks: the smallest global id wins": _ties_across_ranks,
    "many ties (values 0, 1, 2) on 5 ranks": _argmax_case(_integer_ties, 5),
    "-inf entries, a row that is -inf everywhere": _argmax_case(_minus_inf_rows, 3),
    "V = 5 on 8 ranks: ranks without rows report -inf": _argmax_case(lambda: random_tensor((2, 5), 46), 8),
    "world size 1": _argmax_case(lambda: random_tensor((3, 9), 47), 1),
    "a batch of shape [2, 3, 40] on 4 ranks": _argmax_case(lambda: random_tensor((2, 3, 40), 48), 4),
    "float64 logits": _argmax_case(lambda: random_tensor((4, 33), 49, 1.0, torch.float64), 3),
    f"greedy decoding of the course model at every position of {PROMPT!r}, 8 ranks":
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
    expect_tensor(out, expected, "global token id", atol=0, rtol=0, mistakes=[
        ("you returned the LOCAL index of the winning rank; add that rank's start to get the token id.",
         lambda: indices.gather(0, best)[0]),
        ("you returned the winning RANK; return the token id (start of that rank + its local index).",
         lambda: best[0]),
        ("ties across ranks went to the larger id; like torch.argmax, take the smallest id among equal maxima.",
         lambda: global_ids.gather(0, last_rank)[0]),
        ("you added the starts, but then picked the largest id, not the largest VALUE.", lambda: global_ids.amax(0)),
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
    return (torch.tensor([[9.0, 4.0], [7.0, 9.0]]), torch.tensor([[0, 5], [2, 1]]), torch.tensor([0, 100]), 3), x


TOPK_INPUTS = {
    "the docstring's example": _example_topk,
    "random logits, V = 100 on 3 uneven ranks, k = 5": _topk_case(lambda: random_tensor((100,), 51, 2.0), 3, 5),
    "a batch [2, 3, 43] on 4 ranks, k = 4": _topk_case(lambda: random_tensor((2, 3, 43), 52), 4, 4),
    "ties across ranks (values 0 .. 3), k = 6: equal values by smaller id": _topk_case(
        lambda: torch.randint(0, 4, (3, 30), generator=torch.Generator().manual_seed(53)).float(), 3, 6),
    "-inf entries: fewer finite logits than k, the -inf ones by smaller id": _topk_case(_mostly_masked, 3, 8),
    "world size 1, k = 4": _topk_case(lambda: random_tensor((2, 12), 54), 1, 4),
    "8 ranks, V = 64, k = 3": _topk_case(lambda: random_tensor((3, 64), 55), 8, 3),
    "ranks sent their top 8, k = 5": _topk_case(lambda: random_tensor((2, 50), 56), 3, 5, k_local=8),
    "each rank's list in shuffled order": _topk_case(lambda: random_tensor((2, 45), 57), 3, 6, shuffle=58),
    "float64, k = 1": _topk_case(lambda: random_tensor((4, 27), 59, 1.0, torch.float64), 3, 1),
    f"top-10 of the course model's next-token logits for {PROMPT!r}, 8 ranks":
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
    values, ids = expect_tuple(out, 2, "merge_top_k's result (values, ids)")
    id_mistakes = [
        ("you returned LOCAL indices; add each rank's start to its indices before merging.",
         lambda: _stable_top(flat_v, flat_local, k)[1]),
        ("equal values came out larger id first; order ties by the smaller global id.",
         lambda: _stable_top(flat_v, flat_i, k, smaller_first=False)[1]),
        ("you took the first k entries of the concatenated lists without sorting them by value.",
         lambda: flat_i[..., :k]),
    ]
    topk_ids = flat_i.gather(-1, flat_v.topk(k, dim=-1).indices)
    if not torch.equal(topk_ids, exp_ids):
        id_mistakes.append(("torch.topk does not promise any order among equal values: sort by id first, then "
                            "stably by value (or use a stable sort with both keys).", topk_ids))
    expect_tensor(values, exp_values, f"top-{k} values", atol=0, rtol=0, mistakes=[
        ("you took the first k entries of the concatenated lists without sorting them by value.",
         lambda: flat_v[..., :k]),
        ("the values are in ascending order; largest first.", lambda: exp_values.flip(-1)),
    ])
    expect_tensor(ids, exp_ids, f"top-{k} token ids", atol=0, rtol=0, mistakes=id_mistakes)


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


CE_INPUTS = {
    "the docstring's example": lambda: (([torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0]])], torch.tensor([2]), [0, 2]),
                                        torch.tensor([[1.0, 2.0, 3.0]])),
    "6 positions, V = 50 on 3 uneven ranks (17, 17, 16)": _ce_case(lambda: random_tensor((6, 50), 62, 2.0), 3, seed=63),
    "9 positions, V = 61 on 8 ranks": _ce_case(lambda: random_tensor((9, 61), 64, 2.0), 8, seed=65),
    "targets on both sides of every boundary, V = 42 on 4 ranks":
        _ce_case(lambda: random_tensor((8, 42), 66, 2.0), 4, _boundary_targets),
    "world size 1": _ce_case(lambda: random_tensor((4, 19), 67), 1, seed=68),
    "a padded vocabulary: -inf logits on the last rank": _ce_case(_padded_vocab, 3, lambda: torch.tensor([0, 9, 10, 20, 25])),
    "logits of size ~500 (stable only with the max)": _ce_case(lambda: 500 + random_tensor((4, 33), 69, 30.0), 3, seed=70),
    "float64 keeps float64": _ce_case(lambda: random_tensor((5, 29), 72, 2.0, torch.float64), 5, seed=73),
    f"the course model's next-token loss on {PROMPT!r}, 8 ranks": _course_ce(8),
    f"the course model's next-token loss on {PROMPT!r}, 5 uneven ranks": _course_ce(5),
}


def _check_ce(result, inputs, x):
    parts, t, starts = inputs
    expect_that(isinstance(result, tuple) and len(result) == 2, "internal: unexpected result format")
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

    def unscaled():
        m = torch.stack([p.amax(-1) for p in parts])
        s = torch.stack([torch.exp(p - p.amax(-1, keepdim=True)).sum(-1) for p in parts])
        s = torch.where(torch.isneginf(m), torch.zeros_like(s), s)
        return m.amax(0) + torch.log(s.sum(0)) - x.gather(-1, t[:, None])[:, 0]

    mistakes = [
        ("you took the target logit from the wrong shard: the owner of id t is the rank with "
         "starts[r] <= t < starts[r] + V_r; the shards are not all V // world wide.", even_guess),
        ("you looked up the target at the GLOBAL index t in every shard; subtract each rank's start and "
         "count it only on the rank that owns t.", global_index_everywhere),
        ("you took the target logit from the first shard only; it lives on whichever rank owns the target id.",
         first_shard),
        ("you merged the ranks' sums of exp without rescaling each by exp(local_max - global_max).", unscaled),
        ("you returned the mean; return one loss per position, shape [N].", lambda: expected.mean()),
        ("the sign is flipped: the loss is logsumexp - target logit (>= 0).", lambda: -expected),
    ]
    tol = dict(atol=1e-4, rtol=1e-5) if x.dtype != torch.float64 else dict(atol=1e-9, rtol=1e-9)
    expect_tensor(out, expected, "loss per position", **tol, mistakes=mistakes)
    if world > 1 and V not in sizes:
        full = [s for s in shapes if len(s) >= 1 and s[-1] == V and math.prod(s) >= N * V]
        expect_that(not full, f"Right values, but a tensor of shape {list(full[0]) if full else ''} went into a torch "
                              f"function: the full [N, V = {V}] logits were built (torch.cat?). Keep them split; each "
                              "rank sends only a max, a sum and (for its own targets) a logit per position.")


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
    "N = 40, V = 97, d = 16, chunk = 8 (divides N)": _chunk_inputs(40, 97, 16, 8, 81),
    "chunk = 7 does not divide N = 40 (the last chunk has 5 rows)": _chunk_inputs(40, 97, 16, 7, 82),
    "chunk = 64 >= N = 40: a single chunk": _chunk_inputs(40, 97, 16, 64, 83),
    "chunk = 1": _chunk_inputs(9, 37, 6, 1, 84),
    "float64 keeps float64": _chunk_inputs(21, 45, 10, 4, 85, torch.float64),
    "large logits (h scaled by 30): stable only with log_softmax/logsumexp": _chunk_inputs(18, 53, 12, 5, 86, scale=30.0),
    f"the course model's head [49152, 576] on {TRAIN_TEXT!r}, chunk = 4": _course_chunk,
}

# Run by the "backward" protocol: loss.backward() in the learner's process, the gradients sent back.
CHUNK_GRAD_INPUTS = {
    "gradients: N = 24, V = 53, d = 12, chunk = 5": _chunk_inputs(24, 53, 12, 5, 91),
    "gradients in float64: N = 10, V = 31, d = 6, chunk = 3": _chunk_inputs(10, 31, 6, 3, 92, torch.float64),
    "gradients, one chunk (chunk = 50 >= N = 14)": _chunk_inputs(14, 29, 9, 50, 93),
    "gradients, chunk = 4 does not divide N = 30 (V = 41, d = 7)": _chunk_inputs(30, 41, 7, 4, 94),
    "gradients, a wide vocabulary: N = 40, V = 211, d = 8, chunk = 4": _chunk_inputs(40, 211, 8, 4, 95),
}
HAS_BACKWARD_PROTOCOL = "backward" in PROTOCOLS


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
    yield ("you averaged the chunks' means; when chunk does not divide N the last chunk is smaller and gets too much "
           "weight. Sum the per-position losses of every chunk and divide once by N.",
           lambda: torch.stack([c.mean() for c in chunks]).mean())
    yield "you returned the sum; the loss is the mean over the N positions.", lambda: per_pos.sum()
    yield "only the first chunk was counted; loop over all of them.", lambda: chunks[0].mean()
    yield ("you summed the chunks' means (reduction='mean' per chunk, then a sum): divide the total by N.",
           lambda: torch.stack([c.mean() for c in chunks]).sum())
    yield ("you took log_softmax over the positions (dim 0); it goes over the vocabulary (dim -1).",
           lambda: -(logits.log_softmax(0).gather(-1, t[:, None])[:, 0]).mean())


def _check_chunk_loss(loss, inputs, shapes):
    h, W, t, chunk = inputs
    expected = F.cross_entropy(h @ W.T, t)
    tol = dict(atol=1e-5, rtol=1e-5) if h.dtype != torch.float64 else dict(atol=1e-10, rtol=1e-10)
    expect_tensor(loss, expected, "mean cross-entropy", **tol, check_dtype=True,
                  mistakes=[(m, (lambda w=w: w().to(expected.dtype))) for m, w in _chunk_value_mistakes(h, W, t, chunk)])
    V, d = W.shape
    big = [s for s in shapes if _is_logits_block(s, V, d, chunk)]
    expect_that(not big, f"Right value, but a tensor of shape {list(big[0]) if big else ''} went into a torch function: "
                         f"more than chunk = {chunk} rows of the [N, V = {V}] logits at once. Compute the logits "
                         "chunk by chunk, and never put them back together.")


def _check_chunk_value(result, inputs, _ref):
    expect_that(isinstance(result, tuple) and len(result) == 2, "internal: unexpected result format")
    _check_chunk_loss(result[0], inputs, _arg_shapes(result[1]))


def _check_chunk_grad(result, inputs, _ref):
    expect_that(isinstance(result, tuple) and len(result) == 5, "internal: unexpected result format")
    loss, grad_h, grad_W, calls, saved = result
    h, W, t, chunk = inputs
    _check_chunk_loss(loss, inputs, _arg_shapes(calls))
    expect_that(grad_h is not None and grad_W is not None,
                "Right value, but the loss has no gradient for h and W: it was computed under torch.no_grad(), "
                "detached, or rebuilt from .item(). It must come out of autograd (or a torch.autograd.Function) so "
                "that loss.backward() reaches h and W.")
    h_ref = h.clone().requires_grad_(True)
    W_ref = W.clone().requires_grad_(True)
    F.cross_entropy(h_ref @ W_ref.T, t).backward()  # autograd on the one-shot loss is the reference
    tol = dict(atol=1e-6, rtol=1e-4) if h.dtype != torch.float64 else dict(atol=1e-12, rtol=1e-10)
    n_chunks = -(-h.shape[0] // chunk)
    expect_tensor(grad_h, h_ref.grad, "h.grad", **tol, mistakes=[
        ("h.grad is N times too large: the loss was a sum, not a mean.", lambda: h_ref.grad * h.shape[0]),
        ("h.grad is scaled by the number of chunks: divide the summed loss by N once.", lambda: h_ref.grad * n_chunks),
    ])
    expect_tensor(grad_W, W_ref.grad, "W.grad", **tol)
    V, d = W.shape
    N = h.shape[0]
    kept = [tuple(s) for s in saved if _is_logits_block(tuple(s), V, d, 0)]
    rows = sum(math.prod(s) // V for s in kept)
    total = sum(math.prod(s) for s in saved)  # everything autograd keeps, however it is shaped
    budget = 3 * chunk * V + 2 * (N + V) * d  # a few chunks of logits, plus copies of h and W
    expect_that(total <= budget, f"Right values and gradients, but autograd kept {total:,} numbers alive for the "
                                 f"backward pass, more than {budget:,} (a few [chunk = {chunk}, V = {V}] blocks plus "
                                 f"h and W): the logits of the whole batch are being saved, in one shape or another. "
                                 "Recompute each chunk in the backward pass (torch.utils.checkpoint), or write a "
                                 "torch.autograd.Function whose backward computes the gradient chunk by chunk.")
    expect_that(rows <= 2 * chunk, f"Right values and gradients, but autograd kept {rows} rows of [rows, V = {V}] "
                                   f"tensors alive for the backward pass (chunk = {chunk}): every chunk's logits or "
                                   "log-probabilities stay in memory until backward, so the loop saves nothing. "
                                   "Recompute each chunk in the backward pass (torch.utils.checkpoint), or write a "
                                   "torch.autograd.Function whose backward computes the gradient chunk by chunk.")


def _chunk_cases() -> list[Case]:
    cases = [_case(n, b, _check_chunk_value, "record_ops") for n, b in CHUNK_VALUE_INPUTS.items()]
    if HAS_BACKWARD_PROTOCOL:
        cases += [_case(n, b, _check_chunk_grad, "backward") for n, b in CHUNK_GRAD_INPUTS.items()]
    return cases


# ---------------------------------------------------------------- the chapter


def _cases(inputs: dict, check, call: str = "call") -> list[Case]:
    """One case per entry; an entry is a builder (returning inputs and reference data) or plain inputs."""
    return [_case(name, build, check, call) if callable(build) else
            Case(name, (lambda b=build: b), check, call) for name, build in inputs.items()]


CHAPTER = Chapter(
    number="07",
    module="ch07_head_at_scale",
    title="The embedding and the head at scale",
    exercises=[
        Exercise(
            "shard_range", "the [start, end) vocabulary rows of one rank, as even as possible",
            _cases(SHARD_INPUTS, _check_shard),
            hint="divmod(vocab_size, world_size) gives the rows per rank and how many ranks get one more. Rank r "
                 "starts after r full shares plus one extra row for each earlier rank that got one.",
        ),
        Exercise(
            "vocab_parallel_lookup", "one rank's masked lookup: its own rows of E[ids], zeros elsewhere",
            _lookup_cases(),
            hint="Shift the ids by start, mark those outside [0, len(E_shard)), replace them by any valid row "
                 "(0), look up, then zero the marked rows (masked_fill with the mask unsqueezed over d). Any id "
                 "shape works if you never flatten or index by position.",
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "merge_logsumexp", "global log-sum-exp from each rank's (max, sum of exp(x - max))",
            _cases(LSE_INPUTS, _check_lse),
            hint="Let M be the max over ranks (dim 0). Rank r's sum is relative to its own max, so it is worth "
                 "s_r * exp(m_r - M) relative to M. Sum those and return M + log(sum). Ranks whose max is -inf "
                 "add 0 (torch.where), and a row where M is -inf stays -inf.",
            uses_course_model=True,
        ),
        Exercise(
            "vocab_parallel_argmax", "greedy token id from each rank's max and local index, ties to the smallest id",
            _cases(ARGMAX_INPUTS, _check_argmax),
            hint="Global ids are local_indices + starts (reshape starts to [world, 1, ...] to broadcast). Among the "
                 "ranks whose value equals the max over ranks, take the smallest global id.",
            uses_course_model=True,
        ),
        Exercise(
            "merge_top_k", "global top-k values and ids from each rank's top-k, ties by smaller id",
            _cases(TOPK_INPUTS, _check_topk),
            hint="Turn local indices into global ids, move the world dim next to the k dim and flatten the two into "
                 "one list per row. Sort that list by id, then STABLY by value, descending (argsort(stable=True)), "
                 "and keep the first k: ties stay in id order.",
            uses_course_model=True,
        ),
        Exercise(
            "vocab_parallel_cross_entropy", "per-position loss from logit slices that stay split (Megatron's way)",
            _cases(CE_INPUTS, _check_ce, "record_ops"),
            hint="Per rank: the max and, after a global max M, the sum of exp(x - M); log of the total plus M is the "
                 "log-sum-exp. The target logit comes from the one rank with start <= t < start + V_r (at local "
                 "index t - start); the others add 0. loss = logsumexp - target logit.",
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "chunked_cross_entropy", "mean cross-entropy of h @ W.T, at most `chunk` rows of logits at a time",
            _chunk_cases(),
            hint="Loop over h in slices of `chunk` rows, add each slice's F.cross_entropy(..., reduction='sum'), "
                 "divide by N at the end. To keep the backward pass small too, wrap each slice's loss in "
                 "torch.utils.checkpoint.checkpoint(..., use_reentrant=False): autograd then stores only the slice's "
                 "inputs and recomputes its logits when backward reaches it.",
            timeout_s=90.0,
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "On a vocab-parallel embedding, a rank receives an id that another rank owns. What does it do?",
                 {"a": "it sends the id to the rank that owns it, then waits there for the row to come back",
                  "b": "it looks up any local row, zeroes it, and lets the all-reduce add the owner's row",
                  "c": "it looks up row (id mod rows per rank) of its own shard and returns that one",
                  "d": "it raises an error, since every rank must receive only the ids it owns itself"},
                 "de358f8949c023ad9c59",
                 "Reread section 1, 'Vocab-parallel embedding, on real processes', in notebook 07."),
        Question(2, "Eight ranks each hold a slice of the logits. For the softmax denominator, without gathering "
                    "the logits, each rank contributes:",
                 {"a": "its whole slice of logits, gathered on every rank",
                  "b": "its k largest logits, merged into a global top-k",
                  "c": "a max (all-reduce MAX), then a sum of exp(x - M) (all-reduce SUM)",
                  "d": "its local argmax together with the value of that one logit, nothing more"},
                 "9e242be1932168ff9616",
                 "Reread 'The vocab-parallel head' in notebook 07."),
        Question(3, "Rank r reports m_r = max of its logits and s_r = sum of exp(x - m_r). With M = max_r m_r, the "
                    "global log-sum-exp is:",
                 {"a": "M + log(sum_r s_r * exp(m_r - M))",
                  "b": "log(sum_r s_r)",
                  "c": "max_r (m_r + log s_r)",
                  "d": "M + log(sum_r s_r * exp(M - m_r))"},
                 "21c779007275cb083046",
                 "Reread 'The vocab-parallel head' in notebook 07 and redo the merge by hand for two ranks."),
        Question(4, "You run top-p (p = 0.9) on the 50 largest logits only, with their probabilities taken from the "
                    "softmax over the FULL vocabulary. It keeps exactly the tokens top-p over the whole vocabulary "
                    "keeps:",
                 {"a": "always, because the prefilter only ever saves time",
                  "b": "never, since any prefilter changes which tokens survive",
                  "c": "only when the temperature is exactly 1 and no other filter runs",
                  "d": "when the top 50 tokens already hold at least 0.9 of the mass"},
                 "215518c1b8ff595a8065",
                 "Reread 'Which shortcuts are exact' in notebook 07."),
        Question(5, "A training loss loops over 8 chunks of positions and calls F.cross_entropy on each chunk's "
                    "logits with plain autograd. Compared with the one-shot loss, the memory it holds for the "
                    "backward pass is:",
                 {"a": "about 1/8, since only one chunk of logits exists at a time",
                  "b": "about the same N x V, since each chunk's softmax is kept",
                  "c": "about 8 times larger, one copy of the logits per chunk",
                  "d": "nothing, since cross-entropy saves no tensors for backward"},
                 "cdea7b5fe2d49094a378",
                 "Reread 'The loss at training time' in notebook 07."),
    ],
)
