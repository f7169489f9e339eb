"""Chapter 07: shard_range and vocab_parallel_lookup, rank by rank."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ...model import Case
from ..build import case_with_reference
from ...i18n import _, verbatim
from ..compare import CheckFailed, expect_tensor, expect_that, named_mistake
from ..fixtures import course_embedding, course_ids, random_ids, random_table
from .common import ranges


# ---------------------------------------------------------------- shard_range

SHARD_INPUTS = {
    _("the docstring's example: V = 10 over 3 ranks, rank 0 (4 rows)"): (10, 3, 0),
    _("V = 10 over 3 ranks, rank 1"): (10, 3, 1),
    _("V = 10 over 3 ranks, rank 2 (the last)"): (10, 3, 2),
    _("the course model: V = 49,152 over 2 ranks, rank 1"): (49152, 2, 1),
    _("the course model over 8 ranks, rank 5"): (49152, 8, 5),
    _("Qwen3-0.6B's V = 151,936 over 3 ranks (uneven), rank 1"): (151936, 3, 1),
    _("V = 151,936 over 3 ranks, rank 2"): (151936, 3, 2),
    _("GPT-2's V = 50,257 over 8 ranks, rank 0 (the one extra row)"): (50257, 8, 0),
    _("V = 50,257 over 8 ranks, rank 7"): (50257, 8, 7),
    _("V = 100 over 7 ranks (two extra rows), rank 1"): (100, 7, 1),
    _("V = 100 over 7 ranks, rank 2 (the first without an extra row)"): (100, 7, 2),
    _("V = 100 over 7 ranks, rank 6"): (100, 7, 6),
    _("world size 1: one rank owns everything"): (7, 1, 0),
    _("more ranks than tokens: V = 3 over 8 ranks, rank 2 (the last with a row)"): (3, 8, 2),
    _("V = 3 over 8 ranks, rank 5: an empty range [3, 3)"): (3, 8, 5),
    _("V = 13 over 13 ranks, rank 12: one row each"): (13, 13, 12),
}


def _check_shard(out, inputs):
    vocab, world, rank = inputs
    expected = ranges(vocab, world)[rank]
    base, extra = divmod(vocab, world)
    ceil = -(-vocab // world)
    s, e = expected
    rev = ranges(vocab, world)[world - 1 - rank]
    mistakes = [
        (_("each rank got ceil(V / world) rows and the last ones what is left (Megatron's padded layout); here the "
           "first V % world ranks get ONE extra row each."), (min(rank * ceil, vocab), min((rank + 1) * ceil, vocab))),
        (_("every rank got V // world rows and the last one the whole remainder; spread it: one extra row for each "
           "of the first V % world ranks."), (rank * base, (rank + 1) * base if rank < world - 1 else vocab)),
        (_("the extra rows went to the LAST ranks; they go to the first V % world ranks."),
         (vocab - rev[1], vocab - rev[0])),
        (_("your end is inclusive; the range is [start, end): end = start + number of rows."), (s, e - 1)),
        (_("you returned (start, number of rows); return (start, end)."), (s, e - s)),
        (_("the start ignores the extra rows of the ranks before: start = rank * (V // world) + min(rank, V % world)."),
         (rank * base, rank * base + base + (rank < extra))),
    ]
    what = f"shard_range({vocab}, {world}, {rank})"  # code: the same in every language
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise CheckFailed(_("{what}: return a tuple (start, end) of two ints, got {kind}.", what=what,
                            kind=verbatim(type(out).__name__)))
    kinds = sorted({type(v).__name__ for v in out})
    expect_that(all(type(v) is int for v in out),
                _("{what}: return two Python ints, got {kinds} (int(...) turns a 0-d tensor into one).", what=what,
                  kinds=verbatim(kinds)))
    got = tuple(out)
    if got == expected:
        return
    mistakes += [
        (_("`rank <= V % world` where it should be `rank < V % world`: rank V % world got one row too many."),
         (s, e + 1) if rank == extra else expected),
        (_("boundaries at floor(rank * V / world): an even-looking split, but its longer shards are not the first "
           "ones."),
         (rank * vocab // world, (rank + 1) * vocab // world)),
        (_("the end forgets the rank's own extra row: end = start + V // world, plus 1 for the first V % world ranks."),
         (s, s + base)),
    ]
    msg = _("{what}: expected {expected}, got {got}.", what=what, expected=str(expected), got=verbatim(got))
    diagnosis = named_mistake(got, mistakes, expected=expected)
    if diagnosis:
        raise diagnosis.fail(msg)
    raise CheckFailed(msg + " " + _("The ranges of all ranks must be consecutive, cover [0, {vocab}) exactly, and "
                                    "differ in size by at most one row, the larger ones first.", vocab=vocab))


# ---------------------------------------------------------------- vocab_parallel_lookup


def _example_table():
    return torch.arange(12.0).reshape(6, 2)


def _course_batch_ids():
    return torch.stack([course_ids("The cat sat on the"), random_ids(49152, (5,), 71)])


# (table, ids, world size, the ranks to grade): every rank's part is one case
LOOKUP_SETUPS = [
    (_("the docstring's table E = arange(12).reshape(6, 2), ids [1, 2, 3, 5], 3 ranks"),
     _example_table, lambda: torch.tensor([1, 2, 3, 5]), 3, (0, 1, 2)),
    (_("every id of a 10 x 4 table on 3 uneven ranks (4, 3, 3 rows)"),
     lambda: random_table(10, 4, 1), lambda: torch.arange(10), 3, (0, 2)),
    (_("2-D ids [2, 5], V = 50 on 4 ranks (13, 13, 12, 12 rows)"),
     lambda: random_table(50, 8, 2), lambda: random_ids(50, (2, 5), 3), 4, (1, 3)),
    (_("a single 0-d id, 2 ranks"), lambda: random_table(12, 4, 4), lambda: torch.tensor(7), 2, (0, 1)),
    (_("empty ids, 2 ranks"), lambda: random_table(12, 4, 5), lambda: torch.zeros(0, dtype=torch.long), 2, (1,)),
    (_("ids on both sides of every boundary, V = 20 on 3 ranks (7, 7, 6 rows)"),
     lambda: random_table(20, 3, 6), lambda: torch.tensor([0, 6, 7, 8, 13, 14, 15, 19]), 3, (1,)),
    (_("float16 table keeps float16, 3 ranks"),
     lambda: random_table(21, 8, 7, torch.float16), lambda: random_ids(21, (9,), 8), 3, (2,)),
    (_("bfloat16 table, 3-D ids, 8 ranks (3 or 2 rows each)"),
     lambda: random_table(20, 8, 9, torch.bfloat16), lambda: random_ids(20, (2, 2, 3), 10), 8, (3, 6)),
    (_("float64 table keeps every float64 digit, 3 ranks"),
     lambda: torch.randn(17, 6, generator=torch.Generator().manual_seed(14), dtype=torch.float64),
     lambda: random_ids(17, (8,), 15), 3, (1,)),
    (_("V = 5 on 8 ranks: ranks 5-7 own no rows"),
     lambda: random_table(5, 4, 11), lambda: torch.tensor([4, 0, 2, 3, 1]), 8, (4, 6)),
    (_("world size 1"), lambda: random_table(9, 4, 12), lambda: random_ids(9, (6,), 13), 1, (0,)),
    (_("the course model's E [49152, 576] on 8 ranks, {prompt}", prompt=verbatim(repr("The cat sat on the"))),
     course_embedding, lambda: course_ids("The cat sat on the"), 8, (0,)),
    (_("the course model's E on 8 ranks, a batch [2, 5] of ids"), course_embedding, _course_batch_ids, 8, (7,)),
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
    yield (_("you forgot to zero the masked rows: ids this rank does not own were clamped (or replaced) to a valid "
             "row and looked up, but that borrowed row must be set to 0, or the sum over ranks counts it."),
           lambda: rows((ids - s).clamp(0, max(n - 1, 0))))
    yield (_("you replaced the ids this rank does not own by 0 and looked them up, but did not zero those rows "
             "afterwards: every rank adds its row 0 to the sum."),
           lambda: rows(torch.where(inside[..., 0], ids - s, 0)))
    yield (_("you indexed the shard with the global id; subtract start first (global id start is row 0 of the "
             "shard)."),
           lambda: torch.where(inside, rows(ids.clamp(0, max(n - 1, 0))), 0))
    yield (_("the end of the range is exclusive: id start + len(E_shard) belongs to the next rank."),
           lambda: torch.where(((ids >= s) & (ids <= e)).unsqueeze(-1), rows((ids - s).clamp(0, max(n - 1, 0))), 0))
    yield _("you returned the full lookup E[ids]; each rank returns only its own rows (and zeros)."), lambda: E[ids]


def _check_lookup(out, inputs, ref):
    shard, ids, start = inputs
    E, ids, s, e = ref
    inside = ((ids >= s) & (ids < e)).unsqueeze(-1)
    expected = torch.where(inside, F.embedding(ids, E), torch.zeros((), dtype=E.dtype))  # torch's own lookup of E
    expect_tensor(out, expected, _("the part of the rank owning rows [{start}, {end})", start=s, end=e), atol=0, rtol=0,
                  mistakes=list(_lookup_mistakes(shard, ids, s, e, E)))


def _lookup_cases() -> list[Case]:
    out = []
    for name, table, make_ids, world, ranks in LOOKUP_SETUPS:
        for rank in ranks:
            out.append(case_with_reference(_("{setup}: rank {rank}", setup=name, rank=rank),
                                           _lookup_build(table, make_ids, world, rank), _check_lookup))
    return out
