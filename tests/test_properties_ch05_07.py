"""Chapters 05-07 on generated inputs (grading/checks/ch0[567]*/generated.py): inputs within each contract and
covering its edge cases, every solution passing them and agreeing with an independent reference, the new mutants
failing with their own named mistake. In-process (the worker's "each" call without the sandbox): a few seconds."""
from __future__ import annotations

import ast
import math
import pickle
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from grading import i18n, model
from grading.checks import properties
from grading.checks.ch05_embedding_geometry import generated as g05
from grading.checks.ch06_logit_lens import generated as g06
from grading.checks.ch07_head_at_scale import generated as g07
from grading.checks.ch07_head_at_scale.common import ranges
from grading.worker.calls.base import each

from answers import needs_answers

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = {"ch05_embedding_geometry": g05, "ch06_logit_lens": g06, "ch07_head_at_scale": g07}


def _tensors(examples, i=0):
    return [args[i] for args in examples]


def _solution(module: str):
    import importlib

    return importlib.import_module(f"solutions.{module}")


def _examples(gen, name):
    return gen.GENERATED[name][0]()


# ---------------------------------------------------------------- the inputs: within the contract, covering it


def test_chapter_07_inputs_cover_world_sizes_that_do_not_divide_v_and_ranks_that_own_nothing():
    shards = _examples(g07, "shard_range")
    assert any(v % w for v, w, _r in shards) and any(w > v for v, w, _r in shards)
    assert all(0 <= r < w for _v, w, r in shards)

    lse = _examples(g07, "merge_logsumexp")
    worlds = [m.shape[0] for m, _s in lse]
    assert {1, 2} <= set(worlds) and max(worlds) >= 8
    assert any(bool(torch.isneginf(m).all(0).any()) for m, _s in lse)  # a row -inf on every rank
    assert any(bool(torch.isnan(s).any()) for _m, s in lse) and any(  # an empty shard's sum as NaN and as 0
        bool(((s == 0) & torch.isneginf(m)).any()) for m, s in lse)
    one_finite = [m for m, _s in lse if m.dim() > 1 and bool(((~torch.isneginf(m)).sum(0) == 1).any())
                  and bool((m[~torch.isneginf(m)] < -500).any())]
    assert one_finite, "no row where every rank's max is -inf but one, far below 0"
    assert {m.dtype for m, _s in lse} == {torch.float32, torch.float64}

    ce = _examples(g07, "vocab_parallel_cross_entropy")
    assert any(any(p.shape[-1] == 0 for p in parts) for parts, _t, _s in ce)  # a rank that owns nothing
    assert any(any(not p.is_contiguous() for p in parts) for parts, _t, _s in ce)
    assert any(t.numel() == 0 for _p, t, _s in ce)  # a batch of no positions
    for parts, t, starts in ce:
        x = torch.cat([p for p in parts], -1)
        assert starts == [s for s, _e in ranges(x.shape[-1], len(parts))]
        if t.numel():  # the targets sit on finite logits (a loss of inf on a -inf target is left out)
            assert bool(torch.isfinite(x.gather(-1, t[:, None])).all())
    maxima = [torch.cat(parts, -1).amax(-1) for parts, _t, _s in ce if parts[0].shape[0] > 1]
    assert any(float(m.max() - m.min()) > 1e3 for m in maxima), "no rows of very different scales"

    argmax = _examples(g07, "vocab_parallel_argmax")
    assert {v.dtype for v, _i, _s in argmax} == set(properties.FLOAT_DTYPES)
    assert any(v.dim() == 1 for v, _i, _s in argmax) and any(v.dim() == 3 for v, _i, _s in argmax)

    lookup = _examples(g07, "vocab_parallel_lookup")
    assert any(ids.dim() == 0 for _e, ids, _s in lookup) and any(ids.numel() == 0 for _e, ids, _s in lookup)
    assert any(e.shape[0] == 0 for e, _ids, _s in lookup) and any(not e.is_contiguous() for e, _ids, _s in lookup)

    for lv, _li, _starts, k in _examples(g07, "merge_top_k"):
        assert 1 <= k <= lv.shape[0] * lv.shape[-1]


def test_chapter_06_inputs_hold_minus_inf_rows_ties_and_every_dtype():
    ranks = _examples(g06, "target_rank_by_layer")
    assert {x.dtype for x in _tensors(ranks)} == set(properties.FLOAT_DTYPES)
    assert any(bool(torch.isneginf(x).any()) for x in _tensors(ranks))
    assert any(x.shape[0] == 1 for x in _tensors(ranks)) and any(not x.is_contiguous() for x in _tensors(ranks))
    assert all(0 <= t < x.shape[-1] for x, t in ranks)

    kl = _tensors(_examples(g06, "kl_to_final"))
    assert {x.dtype for x in kl} == {torch.float32, torch.float64}
    for lens in kl:  # log-probabilities: every row sums to 1 after exp
        assert torch.allclose(lens.double().exp().sum(-1), torch.ones(lens.shape[0], dtype=torch.float64), atol=1e-3)
    assert any(bool(torch.isneginf(x[-1]).any()) for x in kl), "no final row that rules a token out"
    assert any(bool((torch.isneginf(x[:-1]) & ~torch.isneginf(x[-1])).any()) for x in kl if x.shape[0] > 1)

    for X, Y, ridge in _examples(g06, "fit_tuned_lens"):
        assert ridge >= 0 and X.shape[0] == Y.shape[0] and X.dtype == Y.dtype
        if ridge == 0:  # the contract: N > d_in and full-rank centred rows
            assert X.shape[0] > X.shape[1]
            assert int(torch.linalg.matrix_rank(X.double() - X.double().mean(0))) == X.shape[1]


def test_chapter_05_components_asked_for_are_unique_up_to_sign():
    for X, k in _examples(g05, "pca"):
        assert X.dtype in (torch.float32, torch.float64) and 1 <= k <= min(X.shape)
        S = torch.linalg.svdvals(X.double() - X.double().mean(0))
        assert k <= min(X.shape[0] - 1, X.shape[1]), (X.shape, k)  # no component of zero variance asked for
        assert bool((S[:k] >= 1.4 * S[1:k + 1]).all()) if S.numel() > k else True, S
    for X, k in _examples(g05, "remove_top_directions"):
        S = torch.linalg.svdvals(X.double() - X.double().mean(0))
        assert 0 <= k <= min(X.shape) and (k == 0 or k >= S.numel() or float(S[k - 1]) > 1.4 * float(S[k]))
    tables = _tensors(_examples(g05, "cosine_neighbors"))
    assert all(bool((t != 0).any(1).all()) for t in tables)  # no row all zeros
    assert any(t.unique(dim=0).shape[0] < t.shape[0] for t in tables), "no duplicate rows"
    lengths = [t.double().norm(dim=1) for t in tables]
    assert any(float(n.max() / n.min()) > 1e5 for n in lengths), "no rows of very different lengths"
    assert any(not t.is_contiguous() for t in tables)
    for E, index, k in _examples(g05, "cosine_neighbors"):
        assert 0 <= index < E.shape[0] and 1 <= k <= E.shape[0] - 1


def test_the_examples_are_bounded_ordered_and_found_again_from_a_copy():
    for gen in CHAPTERS.values():
        for name, (examples, _check, _ref) in gen.GENERATED.items():
            found = examples()
            assert 10 <= len(found) <= gen.N + 10, name
            sizes = [properties.size(g07._flat(e) if gen is g07 else e) for e in found]  # rank slices counted
            assert sizes == sorted(sizes), name
    table = g07.lse_examples()
    copy = pickle.loads(pickle.dumps(table.examples[3]))  # the sandbox's inputs are unpickled copies
    assert table.ref(copy) is table.ref(table.examples[3])


# ---------------------------------------------------------------- the references: the solutions pass, and agree


@needs_answers
@pytest.mark.parametrize("module", sorted(CHAPTERS))
def test_every_solution_passes_its_generated_inputs(module):
    gen, solutions = CHAPTERS[module], _solution(module)
    for name, (examples, check, reference) in gen.GENERATED.items():
        found = examples()
        properties.check_examples(each(getattr(solutions, name), (found,)), found, check, reference)


@needs_answers
def test_the_solutions_agree_with_independent_references():
    from scipy.stats import rankdata
    from sklearn.decomposition import PCA

    s05, s06, s07 = (_solution(m) for m in sorted(CHAPTERS))
    for args in _examples(g07, "vocab_parallel_cross_entropy"):
        x = torch.cat(args[0], -1)
        expected = F.cross_entropy(x.double(), args[1], reduction="none")
        assert torch.allclose(s07.vocab_parallel_cross_entropy(*args).double(), expected, rtol=1e-5, atol=1e-4)
    for args in _examples(g07, "merge_logsumexp"):
        x = g07.lse_examples().ref(args)
        got, expected = s07.merge_logsumexp(*args).double(), torch.logsumexp(x.double(), -1)
        assert torch.allclose(got, expected, rtol=1e-5, atol=1e-4, equal_nan=False) or bool(
            (got == expected).all())
    far = 0
    for args in _examples(g07, "vocab_parallel_argmax"):
        ref = g07.argmax_examples().ref(args)
        x, shift = (ref.x, g07.FAR) if isinstance(ref, g07.Far) else (ref, 0)
        far += bool(shift)
        assert torch.equal(s07.vocab_parallel_argmax(*args), x.argmax(-1) + shift)
    assert far == 1, "one example whose ids go past 2**24"
    for lens, target in _examples(g06, "target_rank_by_layer"):
        ranks = [int(rankdata(-row, method="min")[target]) - 1 for row in lens.double().numpy()]
        assert s06.target_rank_by_layer(lens, target).tolist() == ranks
    for (lens,) in _examples(g06, "kl_to_final"):
        got = s06.kl_to_final(lens).double()
        assert not bool(torch.isnan(got).any()), lens
        from torch.distributions import Categorical, kl_divergence

        if bool(torch.isfinite(lens).all()) and bool((lens.double().exp() > 0).all()):
            ref = kl_divergence(Categorical(logits=lens[-1].double().expand_as(lens)), Categorical(logits=lens.double()))
            assert torch.allclose(got[:-1], ref[:-1], rtol=1e-4, atol=1e-5)
    for X, k in _examples(g05, "pca"):
        _proj, comps, ratio = s05.pca(X, k)
        ref = PCA(n_components=k, svd_solver="full").fit(X.double().numpy())
        assert torch.allclose(ratio.double(), torch.from_numpy(ref.explained_variance_ratio_), atol=1e-4)
        assert torch.allclose((comps.double() @ torch.from_numpy(ref.components_).T).abs().diagonal(),
                              torch.ones(k, dtype=torch.float64), atol=1e-4)


@needs_answers
def test_the_two_solution_bugs_stay_fixed():
    """kl_to_final gave NaN when the final row rules a token out; vocab_parallel_cross_entropy raised when a rank
    owns no rows. Both are inputs the contracts allow."""
    s06, s07 = _solution("ch06_logit_lens"), _solution("ch07_head_at_scale")
    lens = torch.tensor([[0.5, 0.5, 0.0], [0.9, 0.1, 0.0]]).log()
    assert torch.allclose(s06.kl_to_final(lens), torch.tensor([0.9 * math.log(1.8) + 0.1 * math.log(0.2), 0.0]))
    x = torch.tensor([[1.0, 2.0, 3.0]])
    parts, starts = [x[:, :2], x[:, 2:], x[:, 3:]], [0, 2, 3]  # the third rank owns nothing
    assert torch.allclose(s07.vocab_parallel_cross_entropy(parts, torch.tensor([2]), starts),
                          F.cross_entropy(x, torch.tensor([2]), reduction="none"))


@needs_answers
def test_a_right_pca_of_one_dimension_is_not_called_transposed():
    """With k = d = 1 a [1, 1] component is both [k, d] and [d, k]: the 'components as columns' message named a
    right answer (the generated 2 x 1 input found it)."""
    X = torch.tensor([[0.0], [3.0], [1.0]], dtype=torch.float64)
    g05.GENERATED["pca"][1](_solution("ch05_embedding_geometry").pca(X, 1), (X, 1))


# ---------------------------------------------------------------- the new mutants: named by the generated case


def _mutant(module: str, file: str):
    path = REPO / "mutants" / module / file
    text = path.read_text(encoding="utf-8")
    expect = next(ast.literal_eval(n.value) for n in ast.parse(text).body
                  if isinstance(n, ast.Assign) and n.targets[0].id == "EXPECT")
    namespace = dict(vars(_solution(module)))
    exec(compile(text, str(path), "exec"), namespace)
    return namespace[file.split("__")[0]], expect


NEW_MUTANTS = [
    ("ch05_embedding_geometry", "explained_variance_ratio__float32_result.py"),
    ("ch06_logit_lens", "kl_to_final__neg_inf_final.py"),
    ("ch06_logit_lens", "kl_to_final__epsilon.py"),
    ("ch06_logit_lens", "target_rank_by_layer__squeezed.py"),
    ("ch07_head_at_scale", "merge_logsumexp__neg_inf_max_as_zero.py"),
    ("ch07_head_at_scale", "merge_logsumexp__float32_result.py"),
    ("ch07_head_at_scale", "vocab_parallel_cross_entropy__batch_max.py"),
]


@needs_answers
@pytest.mark.parametrize("module, file", NEW_MUTANTS)
def test_each_new_mutant_fails_the_generated_case_with_its_own_named_mistake(module, file):
    fn, expect = _mutant(module, file)
    examples, check, reference = CHAPTERS[module].GENERATED[file.split("__")[0]]
    found = examples()
    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(each(fn, (found,)), found, check, reference)
    assert expect in i18n.render(failed.value.mistake, "en"), i18n.render(failed.value.message, "en")
    assert "generated inputs fail; the smallest:" in i18n.render(failed.value.message, "en")
