"""Chapters 01-03 on generated inputs (grading/checks/properties.py): the inputs stay within each stub's contract and
cover its edge cases, every solution passes them against the independent reference, and the mistakes the named cases
cannot see are caught and named only when the evidence singles them out."""
from __future__ import annotations

import torch

import pytest

from grading import i18n, model
from grading.checks import properties
from grading.checks.ch01_embeddings import generated as ch01
from grading.checks.ch02_lm_head import generated as ch02
from grading.checks.ch03_weight_tying import generated as ch03
from grading.worker.calls.base import each

from answers import needs_answers

HALF = (torch.float16, torch.bfloat16)


def _reports(fn, examples):
    return each(fn, (examples,))


def test_ch01_inputs_cover_the_contract():
    lookup = ch01.lookup_examples()
    assert {E.dtype for E, _ids in lookup} == set(properties.FLOAT_DTYPES)
    assert any(not E.is_contiguous() for E, _ids in lookup) and any(not i.is_contiguous() for _E, i in lookup)
    assert any(i.numel() == 0 for _E, i in lookup) and any(1 in i.shape for _E, i in lookup)
    assert any(int(i.max()) > 2 ** 24 for _E, i in lookup if i.numel())  # only a float32 detour gets these wrong
    for E, ids in lookup:  # in the contract: int64 ids in [0, V), at least one dim (a 0-d id may be a view of E)
        assert ids.dtype == torch.long and ids.dim() >= 1 and (ids.numel() == 0 or 0 <= int(ids.min()) <= int(ids.max()) < E.shape[0])
    assert all(bool(torch.isfinite(E).all()) for E, _ids in ch01.onehot_examples())  # 0 * inf is NaN in a product

    offsets = ch01.offset_examples()
    dtypes = {dtype for _i, _d, dtype in offsets}
    assert dtypes >= {torch.float8_e4m3fn, torch.uint8, torch.int16, torch.int64}
    assert any(i * d * dtype.itemsize > 2 ** 53 for i, d, dtype in offsets)

    backward = ch01.backward_examples()
    assert {g.dtype for g, _i, _V in backward} == set(properties.FLOAT_DTYPES)
    assert any(0 in g.stride() for g, _i, _V in backward)  # an expanded gradient, as autograd passes
    assert any(i.dim() == 0 for _g, i, _V in backward) and any(i.numel() == 0 for _g, i, _V in backward)
    for g, ids, V in backward:
        assert g.shape == ids.shape + g.shape[-1:] and (ids.numel() == 0 or int(ids.max()) < V)


def test_ch02_inputs_cover_the_contract():
    logits = ch02.logits_examples()
    assert {h.dtype for h, _W, _b in logits} == set(properties.FLOAT_DTYPES)
    for h, W, b in logits:  # one dtype for all three, as the contract says
        assert W.dtype == h.dtype and (b is None or b.dtype == h.dtype) and W.shape[1] == h.shape[-1]
    assert any(b is not None for _h, _W, b in logits) and any(b is None for _h, _W, b in logits)
    assert any(1 in h.shape[:-1] for h, _W, _b in logits) and any(0 in h.shape for h, _W, _b in logits)
    assert any(not W.is_contiguous() for _h, W, _b in logits)

    top_k = ch02.top_k_examples()
    assert all(0 <= k <= x.shape[0] for x, k in top_k)
    assert any(k == 0 for _x, k in top_k) and any(k == x.shape[0] > 1 for x, k in top_k)
    assert any(bool(torch.isneginf(x).any()) for x, _k in top_k)
    assert {x.dtype for x, _k in top_k} == set(properties.FLOAT_DTYPES)

    chunked = ch02.chunked_examples()
    assert all(1 <= k <= W.shape[0] and chunk >= 1 for _h, W, k, chunk in chunked)
    assert any(chunk > W.shape[0] for _h, W, _k, chunk in chunked) and any(chunk == 1 for *_x, chunk in chunked)
    for h, W, _k, _chunk in chunked:  # half precision only where every sum is exact
        if h.dtype in HALF:
            assert bool((h == h.round()).all() and (W == W.round()).all())

    assert any(ch02.flops_reference(a) > 2 ** 53 for a in ch02.flops_examples())
    assert any(len(a) == 2 for a in ch02.flops_examples()) and any(len(a) == 3 and a[2] == 0 for a in ch02.flops_examples())


def test_ch03_inputs_cover_the_contract():
    rows = [g for (g,) in ch03.rows_examples()]
    assert {g.dtype for g in rows} == set(properties.FLOAT_DTYPES)
    assert any(g.shape[0] == 0 for g in rows) and any(not g.is_contiguous() for g in rows)
    tiny = [g for g in rows if g.numel() and bool((g != 0).any())
            and float(g[g != 0].abs().min().double()) == torch.finfo(g.dtype).smallest_normal * torch.finfo(g.dtype).eps]
    assert {g.dtype for g in tiny} == set(properties.FLOAT_DTYPES)  # each dtype's smallest non-zero number
    assert any(bool(torch.signbit(g[g == 0]).any()) for g in rows if g.numel())  # -0.0

    models = [m for (m,) in ch03.count_examples()]
    assert any(any(p.device.type == "meta" for p in m.parameters()) for m in models)
    assert any(any(not p.requires_grad for p in m.parameters()) for m in models)
    assert any(len(list(m.buffers())) for m in models)
    shared = [m for m in models if len(list(m.named_parameters(remove_duplicate=False))) > len(list(m.parameters()))]
    assert shared, "no model holds one Parameter under two names"

    shares = ch03.share_examples()
    assert all(total >= V * d for V, d, total in shares) and any(total > 2 ** 53 for _V, _d, total in shares)


@needs_answers
@pytest.mark.parametrize("table, module", [(ch01.GENERATED, "solutions.ch01_embeddings"),
                                           (ch02.GENERATED, "solutions.ch02_lm_head"),
                                           (ch03.GENERATED, "solutions.ch03_weight_tying")])
def test_every_solution_passes_its_generated_inputs_against_the_reference(table, module):
    import importlib

    solutions = importlib.import_module(module)
    for name, (examples, check, reference) in table.items():
        inputs = examples()
        properties.check_examples(_reports(getattr(solutions, name), inputs), inputs, check, reference)
        for args in inputs[:5]:  # the reference shown next to a failure is computable
            assert reference(args) is not None


@needs_answers
def test_ids_through_float32_are_named_from_the_one_example_that_shows_them():
    examples = ch01.lookup_examples()
    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(lambda E, ids: E[ids.float().long()], examples), examples,
                                  ch01._check_lookup, ch01.lookup_reference, ["E", "ids"])
    assert "1 of " in i18n.render(failed.value.message, "en")
    assert "went through float32" in i18n.render(failed.value.mistake, "en")


@needs_answers
def test_a_squeezed_logit_tensor_and_a_float32_tuple_result_are_named():
    from solutions.ch02_lm_head import lm_head_logits, top_k_tokens

    examples = ch02.logits_examples()
    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(lambda h, W, b=None: lm_head_logits(h, W, b).squeeze(), examples),
                                  examples, ch02._check_logits_generated, ch02.logits_reference)
    assert failed.value.mistake == properties.SQUEEZED

    examples = [(x, k) for x, k in ch02.top_k_examples() if x.dtype == torch.float64]
    with pytest.raises(model.CheckFailed) as failed:  # a tuple result: its first tensor's dtype is looked at
        properties.check_examples(_reports(lambda x, k: (top_k_tokens(x, k)[0].float(), top_k_tokens(x, k)[1]),
                                           examples), examples, ch02._check_topk, ch02.top_k_reference)
    assert failed.value.mistake == properties.FLOAT32


@needs_answers
def test_a_learner_testing_entries_with_a_norm_fails_on_the_smallest_subnormal():
    examples = ch03.rows_examples()

    def by_norm(grad):
        return int((grad.float().norm(dim=1) > 0).sum())

    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(by_norm, examples), examples, ch03._check_rows, ch03.rows_reference,
                                  ["grad"])
    assert "grad = " in i18n.render(failed.value.message, "en")


def test_a_tuple_result_is_shown_item_by_item():
    text = i18n.render(properties.show((torch.tensor([1.5, 2.0]), torch.tensor([3, 0]))), "en")
    assert text == "([1.5, 2] (float32, shape [2]), [3, 0] (int64, shape [2]))"
