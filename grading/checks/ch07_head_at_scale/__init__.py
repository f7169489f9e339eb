"""Checks for chapter 07, the embedding and the head at scale (exercises/ch07_head_at_scale.py).

Every reference is unsharded: the inputs are built by cutting one full tensor (random, or the course
model's own E and logits) into rank slices with torch.tensor_split, and the learner's merged result is
compared with what torch computes on the whole tensor (F.embedding, torch.logsumexp, torch.argmax, a stable
sort, F.cross_entropy and autograd). The slices use uneven widths, world sizes 1, 2, 3, 5 and 8, ranks that
own no rows, ties across ranks, -inf entries and batch shapes, so the notebook's two-rank demonstration
does not pass as it is.

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...i18n import _
from ...model import Chapter, Exercise, Question
from .common import _cases
from .sharding import SHARD_INPUTS, _check_shard, _lookup_cases
from .merging import ARGMAX_INPUTS, LSE_INPUTS, TOPK_INPUTS, _check_argmax, _check_lse, _check_topk
from .cross_entropy import CE_INPUTS, _check_ce, _chunk_cases, chunks_in_source
from ..unchanged import leave_inputs_unchanged
from .generated import with_generated


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="07",
    module="ch07_head_at_scale",
    title=_("The embedding and the head at scale"),
    exercises=[
        Exercise(
            "shard_range", _("the [start, end) vocabulary rows of one rank, as even as possible"),
            _cases(SHARD_INPUTS, _check_shard),
            hint=_("divmod(vocab_size, world_size) gives the rows per rank and how many ranks get one more. Rank r "
                   "starts after r full shares plus one extra row for each earlier rank that got one."),
        ),
        Exercise(
            "vocab_parallel_lookup", _("one rank's masked lookup: its own rows of E[ids], zeros elsewhere"),
            _lookup_cases(),
            hint=_("Shift the ids by start, mark those outside [0, len(E_shard)), replace them by any valid row "
                   "(0), look up, then zero the marked rows (masked_fill with the mask unsqueezed over d). Any id "
                   "shape works if you never flatten or index by position."),
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "merge_logsumexp", _("global log-sum-exp from each rank's (max, sum of exp(x - max))"),
            _cases(LSE_INPUTS, _check_lse),
            hint=_("Let M be the max over ranks (dim 0). Rank r's sum is relative to its own max, so it is worth "
                   "s_r * exp(m_r - M) relative to M. Sum those and return M + log(sum). Ranks whose max is -inf "
                   "add 0 (torch.where), and a row where M is -inf stays -inf."),
            uses_course_model=True,
        ),
        Exercise(
            "vocab_parallel_argmax", _("greedy token id from each rank's max and local index, ties to the smallest id"),
            _cases(ARGMAX_INPUTS, _check_argmax),
            hint=_("Global ids are local_indices + starts (reshape starts to [world, 1, ...] to broadcast). Among the "
                   "ranks whose value equals the max over ranks, take the smallest global id."),
            uses_course_model=True,
        ),
        Exercise(
            "merge_top_k", _("global top-k values and ids from each rank's top-k, ties by smaller id"),
            _cases(TOPK_INPUTS, _check_topk),
            hint=_("Turn local indices into global ids, move the world dim next to the k dim and flatten the two into "
                   "one list per row. Sort that list by id, then STABLY by value, descending (argsort(stable=True)), "
                   "and keep the first k: ties stay in id order."),
            uses_course_model=True,
        ),
        Exercise(
            "vocab_parallel_cross_entropy", _("per-position loss from logit slices that stay split (Megatron's way)"),
            _cases(CE_INPUTS, _check_ce, "record_ops"),
            hint=_("Per rank: the max and, after a global max M, the sum of exp(x - M); log of the total plus M is the "
                   "log-sum-exp. The target logit comes from the one rank with start <= t < start + V_r (at local "
                   "index t - start); the others add 0. loss = logsumexp - target logit."),
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "chunked_cross_entropy", _("mean cross-entropy of h @ W.T, at most `chunk` rows of logits at a time"),
            _chunk_cases(),
            hint=_("Loop over h in slices of `chunk` rows, add each slice's F.cross_entropy(..., reduction='sum'), "
                   "divide by N at the end. To keep the backward pass small too, wrap each slice's loss in "
                   "torch.utils.checkpoint.checkpoint(..., use_reentrant=False): autograd then stores only the "
                   "slice's inputs and recomputes its logits when backward reaches it."),
            timeout_s=90.0,
            uses_course_model=True,
            source_check=chunks_in_source,
        ),
    ],
    quiz=[
        Question(1, _("On a vocab-parallel embedding, a rank receives an id that another rank owns. What does it do?"),
                 {"a": _("it sends the id to the rank that owns it, then waits there for the row to come back"),
                  "b": _("it raises an error, since every rank must receive only the ids it owns itself"),
                  "c": _("it looks up row (id mod rows per rank) of its own shard and returns that one"),
                  "d": _("it looks up any local row, zeroes it, and lets the all-reduce add the owner's row")},
                 "67d2f6ef2ef72c1c94d5",
                 _("Reread section 1, 'Vocab-parallel embedding, on real processes', in notebook 07.")),
        Question(2, _("Eight ranks each hold a slice of the logits. For the softmax denominator, without gathering "
                      "the logits, each rank contributes:"),
                 {"a": _("a max (all-reduce MAX), then a sum of exp(x - M) (all-reduce SUM)"),
                  "b": _("its k largest logits, merged into a global top-k"),
                  "c": _("its whole slice of logits, gathered on every rank"),
                  "d": _("its local argmax together with the value of that one logit, nothing more")},
                 "0d0eb29bfc5d6b4deace",
                 _("Reread 'The vocab-parallel head' in notebook 07.")),
        Question(3, _("Rank r reports m_r = max of its logits and s_r = sum of exp(x - m_r). With M = max_r m_r, the "
                      "global log-sum-exp is:"),
                 {"a": "log(sum_r s_r)",
                  "b": "M + log(sum_r s_r * exp(m_r - M))",
                  "c": "max_r (m_r + log s_r)",
                  "d": "M + log(sum_r s_r * exp(M - m_r))"},
                 "f6df4b5803afb2ac6987",
                 _("Reread 'The vocab-parallel head' in notebook 07 and redo the merge by hand for two ranks.")),
        Question(4, _("You run top-p (p = 0.9) on the 50 largest logits only, with their probabilities taken from the "
                      "softmax over the FULL vocabulary. It keeps exactly the tokens top-p over the whole vocabulary "
                      "keeps:"),
                 {"a": _("when the top 50 tokens already hold at least 0.9 of the mass"),
                  "b": _("never, since any prefilter changes which tokens survive"),
                  "c": _("only when the temperature is exactly 1 and no other filter runs"),
                  "d": _("always, because the prefilter only ever saves time")},
                 "df9cb459051866a5efb1",
                 _("Reread section 3, 'The cost of sampling over a large vocabulary' (which shortcuts are exact), "
                   "in notebook 07.")),
        Question(5, _("A training loss loops over 8 chunks of positions and calls F.cross_entropy on each chunk's "
                      "logits with plain autograd. Compared with the one-shot loss, the memory it holds for the "
                      "backward pass is:"),
                 {"a": _("about 1/8, since only one chunk of logits exists at a time"),
                  "b": _("about the same N x V, since each chunk's softmax is kept"),
                  "c": _("about 8 times larger, one copy of the logits per chunk"),
                  "d": _("nothing, since cross-entropy saves no tensors for backward")},
                 "cdea7b5fe2d49094a378",
                 _("Reread 'The loss at training time' in notebook 07.")),
        Question(6, _("Four ranks each hold 12,288 of the course model's 49,152 float32 logits for one position. For "
                      "the log-sum-exp, each rank all-reduces its max m_r and its sum s_r instead of its slice. How "
                      "many bytes does one rank contribute per position?"),
                 {"a": "49,152", "b": "4", "c": "12,288", "d": "8"},
                 "48735bfabb87867748e8",
                 _("Reread 'The vocab-parallel head' in notebook 07: two float32 numbers per rank and position.")),
    ],
)))
