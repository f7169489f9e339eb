"""Chapter 01 exercises: embedding lookup.

Fill in each function, then run `python judge.py 01` (or `python judge.py lookup`
for one exercise). `python judge.py hint lookup` gives a hint without the answer.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
import torch.nn.functional as F  # SOLUTION
from torch import Tensor


def lookup(E: Tensor, ids: Tensor) -> Tensor:
    """Return the rows of the embedding table `E` for the token ids `ids`.

    E:   [V, d] float table (any float dtype; keep it), possibly a non-contiguous view (transposed, sliced).
    ids: LongTensor of any shape (0-d and empty too), possibly a view, values in [0, V); V may exceed 2**24.
    returns: [*ids.shape, d], same dtype as E, the rows exactly; a new tensor (for a 0-d id, E[ids] is a view
             of that row, which is fine).

    Example: E = torch.arange(6.).reshape(3, 2); lookup(E, torch.tensor([2, 0]))
             -> tensor([[4., 5.], [0., 1.]])
    """
    # BEGIN SOLUTION
    return E[ids]
    # END SOLUTION


def lookup_onehot(E: Tensor, ids: Tensor) -> Tensor:
    """The same rows as `lookup`, computed as a matrix product one_hot(ids) @ E.

    E:   [V, d];  ids: any shape.
    returns: [*ids.shape, d], same dtype as E.
    The point: lookup is a linear layer without bias applied to one-hot vectors.
    """
    # BEGIN SOLUTION
    one_hot = F.one_hot(ids, num_classes=E.shape[0]).to(E.dtype)
    return one_hot @ E
    # END SOLUTION


def row_byte_offset(i: int, d: int, dtype: torch.dtype) -> int:
    """Byte offset of row `i` from the start of a contiguous (row-major) [V, d] table of `dtype`.

    dtype may be any torch dtype, floating point or integer (torch.int8 tables exist too).

    Example: row_byte_offset(2, 3, torch.float32) -> 24   (2 rows * 3 values * 4 bytes)
    """
    # BEGIN SOLUTION
    return i * d * torch.empty(0, dtype=dtype).element_size()
    # END SOLUTION


def embedding_backward(grad_out: Tensor, ids: Tensor, vocab_size: int) -> Tensor:
    """Gradient of the loss with respect to the table E, given the gradient of the looked-up rows.

    grad_out: [*ids.shape, d], the gradient arriving at the output of the lookup: any float dtype, possibly a
              non-contiguous view (autograd often passes an expanded one).
    ids:      LongTensor of any shape (0-d and empty too), values in [0, vocab_size).
    returns:  a new [vocab_size, d] tensor, same dtype as grad_out. Rows never used stay zero;
              a row used several times receives the sum of its gradients.

    Example: ids [3, 7, 3], grad_out = ones(3, 4), vocab_size 10
             -> row 3 is [2, 2, 2, 2], row 7 is [1, 1, 1, 1], all other rows 0.
    """
    # BEGIN SOLUTION
    d = grad_out.shape[-1]
    grad = torch.zeros(vocab_size, d, dtype=grad_out.dtype)
    return grad.index_add_(0, ids.reshape(-1), grad_out.reshape(-1, d))
    # END SOLUTION


class EmbeddingLookup(torch.autograd.Function):
    """Stretch: the embedding lookup as an autograd Function whose backward is YOUR scatter-add.

    forward(ctx, E, ids):  E [V, d] (requires grad), ids LongTensor of any shape -> [*ids.shape, d], the rows
                           E[ids]. Save what backward needs on ctx (ctx.save_for_backward(ids), ctx.vocab_size).
    backward(ctx, grad_out): grad_out [*ids.shape, d] -> (grad_E [V, d], None): the sum of grad_out's rows into
                           the rows they were looked up from (your embedding_backward), None for the ids.
    """

    @staticmethod
    def forward(ctx, E: Tensor, ids: Tensor) -> Tensor:
        # BEGIN SOLUTION
        ctx.save_for_backward(ids)
        ctx.vocab_size = E.shape[0]
        return E[ids]  # autograd is off inside forward: this indexing records nothing
        # END SOLUTION

    @staticmethod
    def backward(ctx, grad_out: Tensor) -> tuple[Tensor, None]:
        # BEGIN SOLUTION
        (ids,) = ctx.saved_tensors
        return embedding_backward(grad_out, ids, ctx.vocab_size), None  # no gradient for integer ids
        # END SOLUTION


def embedding_autograd(E: Tensor, ids: Tensor) -> Tensor:
    """Stretch: look rows up through EmbeddingLookup, so that autograd calls your backward.

    E: [V, d] float (float32 or float64), a leaf that requires grad;  ids: LongTensor of any shape (0-d and empty too).
    returns: EmbeddingLookup.apply(E, ids), [*ids.shape, d]; its grad_fn is your Function's node (not
             F.embedding's or indexing's), and out.backward(g) leaves in E.grad exactly what F.embedding(ids, E)
             would: every row the sum of the gradients of its lookups, unused rows 0, E's dtype.

    Example: E = torch.randn(10, 4, requires_grad=True); out = embedding_autograd(E, torch.tensor([3, 7, 3]))
             out.sum().backward() -> E.grad[3] is [2, 2, 2, 2], E.grad[7] is [1, 1, 1, 1], other rows 0.
    """
    # BEGIN SOLUTION
    return EmbeddingLookup.apply(E, ids)
    # END SOLUTION


# Chapter 01 quiz: `python judge.py quiz 01` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d"}.
QUIZ = {1: "b", 2: "a", 3: "c", 4: "c", 5: "d"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None}
