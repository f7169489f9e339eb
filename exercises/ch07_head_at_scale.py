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
from torch import Tensor


def shard_range(vocab_size: int, world_size: int, rank: int) -> tuple[int, int]:
    """The rows [start, end) of the vocabulary that rank `rank` of `world_size` owns.

    As even as possible: every rank gets vocab_size // world_size rows, and the first
    vocab_size % world_size ranks get one row more. The ranges of ranks 0 .. world_size - 1 are
    consecutive and cover [0, vocab_size) exactly. Return two Python ints.

    Example: shard_range(10, 3, 0) -> (0, 4); shard_range(10, 3, 1) -> (4, 7); shard_range(10, 3, 2) -> (7, 10)
    """
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


# Chapter 07 quiz: `python judge.py quiz 07` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None, 6: None}
