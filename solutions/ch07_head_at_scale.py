"""Chapter 07 exercises: the embedding and the head at scale.

Fill in each function, then run `python judge.py 07` (or `python judge.py shard_range` for one
exercise). `python judge.py hint shard_range` gives a hint without the answer.

In all of them "rank r" owns the rows [start_r, end_r) of the vocabulary, as shard_range gives them,
and the ranks are in order: start_0 = 0 <= start_1 <= ... <= end_last = V, each rank starting where the one before
it ends. The vocabulary does not have to split evenly, and a rank may even own no rows at all (more ranks than
tokens: then its start equals its end).

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
import torch.nn.functional as F  # SOLUTION
from torch import Tensor
from torch.utils.checkpoint import checkpoint  # SOLUTION


def shard_range(vocab_size: int, world_size: int, rank: int) -> tuple[int, int]:
    """The rows [start, end) of the vocabulary that rank `rank` of `world_size` owns.

    As even as possible: every rank gets vocab_size // world_size rows, and the first
    vocab_size % world_size ranks get one row more. The ranges of ranks 0 .. world_size - 1 are
    consecutive and cover [0, vocab_size) exactly. Return two Python ints.

    Example: shard_range(10, 3, 0) -> (0, 4); shard_range(10, 3, 1) -> (4, 7); shard_range(10, 3, 2) -> (7, 10)
    """
    # BEGIN SOLUTION
    base, extra = divmod(vocab_size, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)
    # END SOLUTION


def vocab_parallel_lookup(E_shard: Tensor, ids: Tensor, start: int) -> Tensor:
    """One rank's part of an embedding lookup: the rows it owns, zeros for every other id.

    E_shard: [V_r, d], rows start .. start + V_r - 1 of the full table E (V_r may be 0).
    ids:     LongTensor of any shape [*S] (0-d, [T], [B, T], ...), token ids in [0, V) of the FULL vocabulary.
    start:   the first global id this rank owns.
    returns: [*S, d] with E_shard's dtype: E[ids] where the id is in [start, start + V_r), 0 elsewhere.
             Summed over all ranks this is exactly E[ids] (each id is owned by one rank).

    Example: E = torch.arange(12.).reshape(6, 2); on the rank with start = 2 and E_shard = E[2:4],
             vocab_parallel_lookup(E[2:4], torch.tensor([1, 2, 3, 5]), 2)
             -> tensor([[0., 0.], [4., 5.], [6., 7.], [0., 0.]])
    """
    # BEGIN SOLUTION
    local = ids - start
    outside = (local < 0) | (local >= E_shard.shape[0])
    rows = F.embedding(local.masked_fill(outside, 0), E_shard) if E_shard.shape[0] else \
        E_shard.new_zeros(*ids.shape, E_shard.shape[1])
    return rows.masked_fill(outside.unsqueeze(-1), 0)
    # END SOLUTION


def merge_logsumexp(local_max: Tensor, local_sumexp: Tensor) -> Tensor:
    """The global log-sum-exp over the whole vocabulary, from what each rank computed on its slice.

    local_max:    [world, *S], rank r's max_j x_j over its slice (-inf if all its entries are -inf).
    local_sumexp: [world, *S], rank r's sum_j exp(x_j - local_max[r]) over its slice. For a rank whose
                  entries are all -inf this is 0 or NaN (exp(-inf - (-inf)) is NaN); such a rank
                  contributes nothing, whichever it is.
    returns:      [*S], log(sum over ALL entries of exp(x)), as torch.logsumexp of the full vector gives it;
                  -inf where every entry is -inf. Same dtype as the inputs.

    Stay stable: logits of size 1000 must not overflow.
    Example: x = [1., 2. | 3.] on two ranks: local_max = [2., 3.], local_sumexp = [1 + e^-1, 1.]
             merge_logsumexp(...) -> log(e + e^2 + e^3) = 3.4076
    """
    # BEGIN SOLUTION
    global_max = local_max.amax(dim=0)
    safe_max = torch.where(torch.isinf(global_max), torch.zeros_like(global_max), global_max)
    empty = torch.isneginf(local_max)  # a shard of -inf values only: its sum is 0 (or NaN), it adds nothing
    scaled = torch.where(empty, torch.zeros_like(local_sumexp), local_sumexp * torch.exp(local_max - safe_max))
    total = scaled.sum(dim=0)
    return torch.where(torch.isneginf(global_max), global_max, safe_max + torch.log(total))
    # END SOLUTION


def vocab_parallel_argmax(local_values: Tensor, local_indices: Tensor, starts: Tensor) -> Tensor:
    """Greedy decoding over a sharded vocabulary: the global token id of the largest logit.

    local_values:  [world, *S], rank r's largest logit on its slice (-inf for a rank that owns no rows).
    local_indices: [world, *S] LongTensor, where that value is in rank r's slice (0-based, local).
    starts:        [world] LongTensor, the first global id of each rank.
    returns:       LongTensor [*S], the global id of the largest logit. Ties go to the SMALLEST global id,
                   as torch.argmax on the full logits does (each rank's local index is already the smallest
                   in its slice).

    Example: local_values = [[2.], [5.]], local_indices = [[3], [1]], starts = [0, 10] -> tensor([11])
    """
    # BEGIN SOLUTION
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    global_ids = local_indices + starts.reshape(shape)
    best = local_values.amax(dim=0, keepdim=True)
    big = torch.iinfo(torch.long).max
    return torch.where(local_values == best, global_ids, torch.full_like(global_ids, big)).amin(dim=0)
    # END SOLUTION


def merge_top_k(local_values: Tensor, local_indices: Tensor, starts: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The global top-k from each rank's own top-k.

    local_values:  [world, *S, k_r], each rank's k_r >= k largest logits, in any order.
    local_indices: [world, *S, k_r] LongTensor, their positions in that rank's slice (local ids).
    starts:        [world] LongTensor, the first global id of each rank.
    k:             how many to return.
    returns:       (values [*S, k], ids [*S, k] LongTensor): the k largest logits of the whole vocabulary
                   and their GLOBAL ids, largest first; equal values are ordered by smaller id first.

    Example: local_values = [[9., 4.], [7., 9.]], local_indices = [[0, 5], [2, 1]], starts = [0, 100], k = 2
             -> (tensor([9., 9.]), tensor([0, 101]))
    """
    # BEGIN SOLUTION
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    ids = local_indices + starts.reshape(shape)
    values = torch.movedim(local_values, 0, -2).flatten(-2)  # [..., world * k]
    ids = torch.movedim(ids, 0, -2).flatten(-2)
    by_id = ids.argsort(dim=-1, stable=True)  # first by id, then a stable sort by value keeps the id order in ties
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    order = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, order), ids.gather(-1, order)
    # END SOLUTION


def vocab_parallel_cross_entropy(local_logits: list[Tensor], targets: Tensor, starts: list[int]) -> Tensor:
    """Cross-entropy per position, from logits that stay split across ranks (Megatron's vocab-parallel loss).

    local_logits: a list with one tensor per rank, [N, V_r] each (the V_r may differ); rank r holds the logits
                  of the global ids starts[r] .. starts[r] + V_r - 1. Entries may be -inf (masked tokens).
    targets:      LongTensor [N], global ids in [0, V).
    starts:       list of ints, the first global id of each rank.
    returns:      [N], loss_i = logsumexp_j(x_ij) - x_i,targets[i]: what
                  F.cross_entropy(torch.cat(local_logits, dim=-1), targets, reduction="none") gives,
                  without ever building that [N, V] concatenation. Same dtype as the logits.

    Work as the ranks would: per rank, a max, a sum of exp, and the target logit if the rank owns it.
    Example: local_logits = [tensor([[1., 2.]]), tensor([[3.]])], targets = tensor([2]), starts = [0, 2]
             -> tensor([0.4076])   (log(e + e^2 + e^3) - 3)
    """
    # BEGIN SOLUTION
    owners = [x for x in local_logits if x.shape[-1]]  # a rank that owns no rows has no max and adds nothing
    global_max = torch.stack([x.amax(dim=-1) for x in owners]).amax(dim=0)  # [N]
    safe_max = torch.where(torch.isinf(global_max), torch.zeros_like(global_max), global_max)
    sum_exp = sum(torch.exp(x - safe_max[:, None]).sum(dim=-1) for x in owners)
    target_logit = torch.zeros_like(global_max)
    for x, start in zip(local_logits, starts):
        local = targets - start
        mine = (local >= 0) & (local < x.shape[-1])
        picked = x.gather(-1, local.clamp(0, max(x.shape[-1] - 1, 0))[:, None])[:, 0] if x.shape[-1] else target_logit
        target_logit = target_logit + torch.where(mine, picked, torch.zeros_like(picked))
    return safe_max + torch.log(sum_exp) - target_logit
    # END SOLUTION


# BEGIN SOLUTION NO PROMPT
def _chunk_loss_sum(h: Tensor, W: Tensor, targets: Tensor) -> Tensor:
    return F.cross_entropy(h @ W.T, targets, reduction="sum")


# END SOLUTION
def chunked_cross_entropy(h: Tensor, W: Tensor, targets: Tensor, chunk: int) -> Tensor:
    """Mean cross-entropy of the logits h @ W.T against targets, never holding more than `chunk` rows of them.

    h:       [N, d] hidden states (requires_grad in training).
    W:       [V, d] the LM head (requires_grad in training).
    targets: LongTensor [N], ids in [0, V).
    chunk:   the most rows of logits ([chunk, V]) that may exist at once, in the forward pass AND in the
             backward pass. chunk may not divide N; chunk >= N means a single chunk.
    returns: a 0-d tensor equal to F.cross_entropy(h @ W.T, targets) (the mean over N), whose .backward()
             gives the same h.grad and W.grad as that one-shot loss.

    Autograd keeps a [chunk, V] tensor of every chunk alive for the backward pass (the log-softmax that each
    chunk's cross-entropy saves) unless you tell it otherwise: a plain loop over chunks drops only the passing logits
    and still holds N x V numbers until the backward pass, so its memory grows with N like the one-shot loss's.
    """
    # BEGIN SOLUTION
    total = h.new_zeros(())
    for i in range(0, h.shape[0], chunk):
        # checkpoint keeps only the inputs of each chunk; backward recomputes its logits, one chunk at a time
        total = total + checkpoint(_chunk_loss_sum, h[i:i + chunk], W, targets[i:i + chunk], use_reentrant=False)
    return total / h.shape[0]
    # END SOLUTION


# Chapter 07 quiz: `python judge.py quiz 07` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: "d", 2: "a", 3: "b", 4: "a", 5: "b", 6: "d"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None, 6: None}
