"""Chapter 02 exercises: the LM head.

Fill in each function, then run `python judge.py 02` (or `python judge.py lm_head_logits`
for one exercise). `python judge.py hint lm_head_logits` gives a hint without the answer.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
import torch.nn.functional as F  # SOLUTION
from torch import LongTensor, Tensor


def lm_head_logits(h: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    """Logits of the LM head: one score per vocabulary token for every position in `h`.

    h: [..., d] final hidden states (any number of leading dimensions, even none; sizes 0 and 1 too).
    W: [V, d] head weight, one row per token (how nn.Linear(d, V) stores its weight).
    b: [V] optional bias, or None (most modern models have none).
    h, W and b share one float dtype (float16, bfloat16, float32 or float64); any of them may be a
    non-contiguous view.
    returns: [..., V], same dtype as h, every leading dimension kept (a [1, d] h gives [1, V]).

    Example: h = torch.tensor([1., 2.]); W = torch.tensor([[1., 0.], [0., 1.], [1., 1.]])
             lm_head_logits(h, W) -> tensor([1., 2., 3.])
    """
    # BEGIN SOLUTION
    logits = h @ W.T
    return logits if b is None else logits + b
    # END SOLUTION


def top_k_tokens(logits: Tensor, k: int) -> tuple[Tensor, LongTensor]:
    """The k largest entries of a [V] logit vector and their token ids.

    logits: [V] float tensor (may contain -inf for masked tokens).
    k: 0 <= k <= V.
    returns: (values [k], same dtype as logits; ids [k], int64), in descending order of value.
             Equal values are listed by increasing id (ties go to the lower id).

    Example: top_k_tokens(torch.tensor([1., 3., 3., 2., 3.]), 2) -> (tensor([3., 3.]), tensor([1, 2]))
    """
    # BEGIN SOLUTION
    values, ids = torch.sort(logits, descending=True, stable=True)  # stable: equal values keep id order
    return values[:k], ids[:k]
    # END SOLUTION


def lm_head_flops(d: int, V: int, positions: int = 1) -> int:
    """Arithmetic operations of the LM head on `positions` positions; a multiply-add counts as 2.

    Example: lm_head_flops(2, 3) -> 12   (3 logits, each 2 multiplications and 2 additions)
    """
    # BEGIN SOLUTION
    return 2 * d * V * positions
    # END SOLUTION


def logit_contributions(h: Tensor, w: Tensor) -> tuple[Tensor, float]:
    """How each dimension contributes to the logit <h, w>, and the cosine of the angle between h and w.

    h: [d] a hidden state;  w: [d] one row of the head.
    returns: (contributions [d], same dtype as h, whose sum is the logit;
              cos, a Python float in [-1, 1]; 0.0 when h or w is the zero vector).
    cos must be accurate for any h and w the dtype can hold: tiny vectors (norms of 1e-9 or 1e-20) as well, and
    float16/bfloat16 vectors whose products or norms would overflow in half precision (compute it in float64).
    Rounding can put a computed cosine just outside [-1, 1] (1.0000001 for h == w): clamp it.

    Example: logit_contributions(torch.tensor([1., 2.]), torch.tensor([3., -1.]))
             -> (tensor([3., -2.]), 0.1414...)      (logit 1 = 3 - 2;  1 / (sqrt(5) * sqrt(10)))
    """
    # BEGIN SOLUTION
    hd, wd = h.double(), w.double()
    norms = float(hd.norm() * wd.norm())
    cos = float(hd @ wd) / norms if norms > 0 else 0.0
    return h * w, min(1.0, max(-1.0, cos))
    # END SOLUTION


# BEGIN SOLUTION NO PROMPT
def _best_k(values: Tensor, ids: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The k best (value descending, then id ascending) of candidate columns."""
    by_id = torch.sort(ids, dim=-1, stable=True).indices
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    by_value = torch.sort(values, dim=-1, descending=True, stable=True).indices[:, :k]  # stable: lower id first
    return values.gather(-1, by_value), ids.gather(-1, by_value)


# END SOLUTION
def topk_logits_chunked(h: Tensor, W: Tensor, k: int, chunk: int) -> tuple[Tensor, LongTensor]:
    """Stretch: the k largest logits of h @ W.T and their token ids, computed over vocabulary chunks of at most
    `chunk` rows of W, so that no [N, V] logit matrix is ever formed (only [N, chunk] and [N, k + chunk]).

    h: [N, d] hidden states;  W: [V, d] the head;  1 <= k <= V;  chunk >= 1.
    returns: (values [N, k], h's dtype; ids [N, k], int64): per row, in descending order of value, equal values
             by increasing id; equal to torch.topk(h @ W.T, k) with ties going to the lower id.

    Example: h = [[1., 0.]], W = [[1., 0.], [3., 0.], [2., 0.], [3., 0.], [0., 0.]], k = 2, chunk = 2
             -> (tensor([[3., 3.]]), tensor([[1, 3]]))
    """
    # BEGIN SOLUTION
    N = h.shape[0]
    best_v = h.new_empty(N, 0)
    best_i = torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T  # [N, c]: one chunk of the vocabulary
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        best_v, best_i = _best_k(torch.cat([best_v, logits], -1), torch.cat([best_i, ids], -1), k)
    return best_v, best_i
    # END SOLUTION


# Chapter 02 quiz: `python judge.py quiz 02` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: "c", 2: "b", 3: "a", 4: "d", 5: "a", 6: "c"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None, 6: None}
