"""Chapter 01's cases and checks: the named inputs of each exercise and what each check compares."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from ..compare import CheckFailed, expect_equal, expect_tensor
from ..fixtures import course_embedding, course_ids, random_ids, random_table
from ...i18n import _, verbatim


LOOKUP_INPUTS = {
    _("1-D ids [3, 7, 3] in a 10 x 4 table (repeated id)"): lambda: (random_table(10, 4, 1), torch.tensor([3, 7, 3])),
    _("2-D ids, a batch of 2 sequences of 5"): lambda: (random_table(50, 8, 2), random_ids(50, (2, 5), 3)),
    _("empty ids (no tokens)"): lambda: (random_table(10, 4, 4), torch.zeros(0, dtype=torch.long)),
    _("a single 0-d id"): lambda: (random_table(10, 4, 5), torch.tensor(9)),
    _("the first and the last row"): lambda: (random_table(30, 6, 6), torch.tensor([29, 0, 29])),
    _("float16 table keeps float16"): lambda: (random_table(20, 8, 7, torch.float16), random_ids(20, (4,), 8)),
    _("bfloat16 table, 3-D ids"): lambda: (random_table(20, 8, 9, torch.bfloat16), random_ids(20, (2, 2, 3), 10)),
    _("the course model's real E [49152, 576], 'The cat sat on the'"): lambda: (course_embedding(), course_ids()),
}


def _lookup_mistakes(E: torch.Tensor, ids: torch.Tensor):
    yield (_("you indexed with ids + 1 or ids - 1: row i is E[i] (ids start at 0)."),
           lambda: E[(ids + 1).clamp(max=E.shape[0] - 1)])
    if ids.dim() == 1 and ids.numel() and int(ids.max()) < E.shape[1]:
        yield (_("you took columns (E[:, ids]) instead of rows: a token's vector is a row of the [V, d] table."),
               lambda: E[:, ids].T)
    if ids.numel() and int(ids.max()) > 2 ** 24:
        yield (_("your ids went through float32 (a .float(), a float one-hot, a float arange): float32 holds integers "
                 "exactly only up to 2**24 = 16,777,216, so larger ids land on a neighbouring row. Keep ids int64."),
               lambda: F.embedding(ids.float().long(), E))
    if ids.dim() != 1:
        yield (_("you flattened the ids: the result keeps their shape, [*ids.shape, d] (one row per id, wherever it "
                 "sits in the batch). Index with the ids as they are, or reshape back at the end."),
               lambda: F.embedding(ids.reshape(-1), E))


def _check_lookup(out, inputs):
    E, ids = inputs
    expected = F.embedding(ids, E)  # torch's own embedding op; for the real case E is the model's table
    expect_tensor(out, expected, _("embedding rows"), atol=0, rtol=0, mistakes=_lookup_mistakes(E, ids))


MATMUL_OPS = {"matmul", "mm", "bmm", "einsum", "tensordot", "__matmul__", "__rmatmul__", "linear", "addmm", "mv"}


def _check_onehot(result, inputs):
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailed(_("internal: unexpected result format"))
    out, calls = result
    _check_lookup(out, inputs)
    E, ids = inputs
    products = [shapes for name, shapes in calls if name in MATMUL_OPS]
    uses_table = any(list(E.shape) in shapes or list(E.T.shape) in shapes for shapes in products)
    if ids.numel() and not uses_table:
        seen = sorted({name for name, _ in calls if not name.startswith("_")})
        raise CheckFailed(_("Right values, but E itself never went into a matrix product (ops seen: "
                            "{ops}). This exercise asks for one_hot(ids) @ E, to see that "
                            "lookup is a product of a one-hot matrix [*, V] with the whole table [V, d].",
                            ops=verbatim(', '.join(seen)[:200])))


def _check_offset(out, inputs, expected: int | None = None):
    """Against the address a real table gives (data_ptr()), or `expected` (the generated inputs' exact product)."""
    i, d, dtype = inputs
    if expected is None:
        table = torch.empty(i + 1, d, dtype=dtype)
        expected = table[i].data_ptr() - table.data_ptr()  # what the hardware address says
    size = dtype.itemsize
    expect_equal(out, expected, _("byte offset of row {i} (d={d}, {dtype})", i=i, d=d, dtype=dtype), mistakes=[
        (_("you counted elements, as if each were 1 byte: offsets count bytes, so multiply by the element size, "
           "which depends on the dtype (E.element_size(), or dtype.itemsize)."), i * d),
        (_("you counted rows from 1: row 0 starts at byte 0."), (i + 1) * d * size),
        (_("you used a column stride: rows are d elements apart in a row-major table."), i * size),
        (_("you assumed 4 bytes per element (float32): the element size depends on the dtype "
           "(torch.empty(0, dtype=dtype).element_size())."), i * d * 4),
        (_("you read the element size from the digits of the dtype's name: float8_e4m3fn is 1 byte, not 843 bits. "
           "Ask torch: dtype.itemsize, or torch.empty(0, dtype=dtype).element_size()."),
         lambda: i * d * (int("".join(c for c in str(dtype) if c.isdigit())) // 8)),
    ])


OFFSET_INPUTS = {
    _("row 0 starts at byte 0"): (0, 576, torch.float32),
    _("row 3, d=576, float32"): (3, 576, torch.float32),
    _("last row of the course table, bfloat16"): (49151, 576, torch.bfloat16),
    _("row 7, d=10, float64"): (7, 10, torch.float64),
    _("row 5, d=3, int8 (1 byte each)"): (5, 3, torch.int8),
    _("row 1000, d=768, float16"): (1000, 768, torch.float16),
}


def _check_offset_real(out, inputs):
    E = course_embedding()
    i = int(course_ids(" cat")[0])
    expected = E[i].data_ptr() - E.data_ptr()
    expect_equal(out, expected, _("byte offset of the ' cat' row ({i}) in the real E, measured with data_ptr()", i=i))


def _real_offset_inputs():
    E = course_embedding()
    return int(course_ids(" cat")[0]), E.shape[1], E.dtype


BACKWARD_INPUTS = {
    _("ids [3, 7, 3], V=10, d=4, gradient of ones (the chapter's example)"):
        lambda: (torch.ones(3, 4), torch.tensor([3, 7, 3]), 10),
    _("random gradient, 2-D ids with repeats"): lambda: (random_table(2 * 6, 5, 11).reshape(2, 6, 5), random_ids(8, (2, 6), 12), 8),
    _("every id the same"): lambda: (random_table(5, 3, 13), torch.full((5,), 2), 4),
    _("empty ids: all-zero gradient"): lambda: (torch.zeros(0, 4), torch.zeros(0, dtype=torch.long), 6),
    _("the last row only"): lambda: (random_table(1, 4, 14), torch.tensor([9]), 10),
    _("float64 gradient keeps float64"): lambda: (random_table(4, 3, 15, torch.float64), torch.tensor([0, 1, 0, 1]), 3),
}


def _check_backward(out, inputs, atol: float = 1e-6, rtol: float = 1e-6):
    grad_out, ids, V = inputs
    table = torch.zeros(V, grad_out.shape[-1], dtype=grad_out.dtype, requires_grad=True)
    F.embedding(ids, table).backward(grad_out)  # autograd is the reference
    expected = table.grad

    def overwritten():
        g = torch.zeros_like(expected)
        g[ids.reshape(-1)] = grad_out.reshape(-1, grad_out.shape[-1])
        return g

    def averaged():
        counts = torch.bincount(ids.reshape(-1), minlength=V).clamp(min=1).to(expected.dtype)
        return expected / counts[:, None]

    used = int(ids.max()) + 1 if ids.numel() else 0
    expect_tensor(out, expected, _("gradient of E"), atol=atol, rtol=rtol, mistakes=[
        (_("your gradient has ids.max() + 1 = {used} rows: the table has vocab_size = {V} rows, used or not "
           "(start from torch.zeros(vocab_size, d)).", used=used, V=V), lambda: expected[:used]),
        (_("repeated ids were averaged. A row used twice must receive the SUM of its gradients (each use "
           "contributes to the loss separately): use index_add_ or scatter_add_ without dividing."), averaged),
        (_("repeated ids overwrote each other (g[ids] = grad_out). A row used twice must receive the SUM "
           "of its gradients: use index_add_ or scatter_add_."), overwritten),
    ])


# ---------------------------------------------------------------- stretch: embedding_autograd


def _autograd_case(V: int, d: int, ids: torch.Tensor, seed: int, dtype: torch.dtype = torch.float32,
                   transposed: bool = False) -> tuple:
    """(E, ids, grad_out): a random table, the ids, and a random gradient arriving at the looked-up rows
    (`transposed`: the same values as a non-contiguous view, dims 0 and 1 swapped in memory)."""
    g = torch.Generator().manual_seed(seed + 7)
    grad = torch.randn(*ids.shape, d, generator=g).to(dtype)
    return random_table(V, d, seed, dtype), ids, grad.transpose(0, 1).contiguous().transpose(0, 1) if transposed else grad


AUTOGRAD_INPUTS = {
    _("the docstring example: V = 10, d = 4, ids [3, 7, 3]"): lambda: _autograd_case(10, 4, torch.tensor([3, 7, 3]), 110),
    _("2-D ids [4, 6] with repeats, V = 12, d = 5"): lambda: _autograd_case(12, 5, random_ids(6, (4, 6), 111), 112),
    _("3-D ids [2, 3, 4], V = 30, d = 3"): lambda: _autograd_case(30, 3, random_ids(30, (2, 3, 4), 113), 114),
    _("a 0-d id (one scalar token) -> a [d] row"): lambda: _autograd_case(8, 6, torch.tensor(5), 115),
    _("no ids at all: [0] -> [0, d] and a zero gradient"): lambda: _autograd_case(7, 4, torch.zeros(0, dtype=torch.long), 116),
    _("one id repeated 500 times, float64 (every gradient accumulates)"): lambda: _autograd_case(
        9, 4, torch.full((500,), 2), 117, torch.float64),
    _("float64, ids [5, 8], V = 1000, d = 16"): lambda: _autograd_case(1000, 16, random_ids(1000, (5, 8), 118), 119,
                                                                   torch.float64),
    _("a non-contiguous grad_out (a transposed view, as autograd may pass one: reshape it, .view cannot)"):
        lambda: _autograd_case(20, 4, random_ids(20, (2, 3), 121), 122, transposed=True),
    _("the course tokens 'The cat sat on the mat. The cat sat' in a random [49152, 8] table"): lambda: _autograd_case(
        49152, 8, course_ids("The cat sat on the mat. The cat sat")[None], 120),
}


def _check_autograd(out, inputs):
    E, ids, grad_out = inputs
    leaf = E.detach().clone().requires_grad_(True)
    expected = F.embedding(ids, leaf)
    expected.backward(grad_out)
    expected_grad = leaf.grad
    flat, d, V = ids.reshape(-1), E.shape[1], E.shape[0]
    expect_tensor(out["out"], expected.detach(), _("embedding_autograd(E, ids) (the forward)"), atol=0, rtol=0,
                  mistakes=[
        (_("you flattened the ids: the result keeps the ids' shape plus d, [*ids.shape, d] (E[ids] does)."),
         lambda: E[flat]),
    ])
    if not out["custom"]:
        raise CheckFailed(_("the output's grad_fn is {node}, not your Function's node: the gradient came from "
                            "autograd's own backward (F.embedding, E[ids] or index_select outside a Function). Return "
                            "EmbeddingLookup.apply(E, ids), with the lookup inside forward and your scatter-add in "
                            "backward.", node=verbatim(out['node'])))
    if out["grad"] is None:
        raise CheckFailed(_("E.grad is None after out.backward(grad_out): backward must return the gradient for E "
                            "first (and None for ids)."))
    grad = grad_out.reshape(-1, d)

    def overwrite():
        return torch.zeros(V, d, dtype=E.dtype).index_put_((flat,), grad)

    def averaged():
        counts = torch.bincount(flat, minlength=V).clamp(min=1).to(E.dtype)
        return expected_grad / counts[:, None]

    expect_tensor(out["grad"], expected_grad, _("E.grad after out.backward(grad_out)"), atol=1e-12 if E.dtype ==
                  torch.float64 else 1e-5, rtol=1e-9 if E.dtype == torch.float64 else 1e-5, mistakes=[
        (_("a repeated id must receive the SUM of its gradients: assignment (grad[ids] = grad_out) keeps only one of "
           "them. Accumulate with index_add_ (or index_put_(..., accumulate=True))."), overwrite),
        (_("you averaged the gradients of a repeated id; autograd sums them."), averaged),
        (_("your gradient counts the lookups (a gradient of ones): sum grad_out's rows, not 1 per lookup."),
         lambda: torch.zeros(V, d, dtype=E.dtype).index_add_(0, flat, torch.ones_like(grad))),
    ])
