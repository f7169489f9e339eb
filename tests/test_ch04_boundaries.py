"""Chapter 04's contracts at their exact edges: a cumulative mass exactly on 1 - p, a probability exactly equal to
min_p * p_max, k = 1 with tied top logits, a result that is the input itself (or the input changed in place), and a
named mistake that is one mistake (never "... Or: ...")."""
from __future__ import annotations

import re
import sys

import pytest
import torch
from answers import REPO, skip_module_in_handout

skip_module_in_handout()
sys.path.insert(0, str(REPO))
from grading import i18n  # noqa: E402
from grading.checks import properties  # noqa: E402
from grading.checks.ch04_sampling import filters, greedy, sampling  # noqa: E402
from grading.checks.ch04_sampling.common import _binary, _binary_min_p  # noqa: E402
from grading.checks.unchanged import IN_PLACE, _checked  # noqa: E402
from grading.model import CheckFailed  # noqa: E402
from grading.worker.calls import ch04 as calls  # noqa: E402
from grading.worker.calls.base import each  # noqa: E402
from solutions import ch04_sampling as S  # noqa: E402
from tools.translations import stub_docstrings  # noqa: E402

NEG_INF = float("-inf")


def _doc(name: str) -> str:
    return " ".join(stub_docstrings()[name].split())


def _mistake(check, out, inputs) -> str:
    with pytest.raises(CheckFailed) as failed:
        check(out, inputs)
    return i18n.render(failed.value.mistake, "en")


# ---------------------------------------------------------------- the contracts say it


def test_the_contracts_state_the_exact_boundaries_and_the_dtype():
    top_p, min_p = _doc("top_p_filter"), _doc("min_p_filter")
    assert "<= 1 - p (a sum exactly equal to 1 - p removes it)" in top_p
    assert "strictly below p" in top_p and "in their own dtype" in top_p
    assert "p = 0.75 keep the first two" in top_p and "with p = 0.875, three" in top_p
    assert "strictly below the threshold: a probability EQUAL to min_p * p_max is kept" in min_p
    assert "in their own dtype" in min_p and "threshold exactly 0.125) keep all four" in min_p
    assert "with k = 1, every logit equal to the largest one is kept" in _doc("top_k_filter")


@pytest.mark.parametrize("name", ["softmax", "apply_temperature", "top_k_filter", "top_p_filter", "min_p_filter",
                                  "greedy_generate"])
def test_every_contract_says_the_result_is_a_new_tensor(name):
    assert re.search(r"returns: a new (\[\.\.\., V\] )?(Long)?[Tt]ensor", _doc(name)) and "itself" in _doc(name), name


def test_the_examples_in_the_contracts_are_the_warpers():
    from transformers.generation.logits_process import MinPLogitsWarper, TopPLogitsWarper

    x = _binary()  # each row: 0.5, 0.25, 0.125, 0.125
    for p, kept in ((0.75, 2), (0.875, 3), (0.5, 1)):
        assert torch.isfinite(TopPLogitsWarper(top_p=p)(None, x)).sum(-1).tolist() == [kept, kept], p
    for m, kept in ((0.25, 4), (0.5, 2)):
        assert torch.isfinite(MinPLogitsWarper(min_p=m)(None, x)).sum(-1).tolist() == [kept, kept], m


# ---------------------------------------------------------------- the checks test it, and name the mistake


def _top_p_strict(x, p):
    sorted_logits, order = x.sort(-1)
    drop = S.softmax(sorted_logits).cumsum(-1) < 1 - p
    drop[..., -1] = False
    return x.masked_fill(drop.scatter(-1, order, drop), NEG_INF)


@pytest.mark.parametrize("p", [0.75, 0.5, 0.875])
def test_top_p_with_a_strict_comparison_fails_on_an_exact_boundary_and_is_named(p):
    x = _binary()
    filters._check_top_p(S.top_p_filter(x, p), (x, p))
    with pytest.raises(CheckFailed) as failed:
        filters._check_top_p(_top_p_strict(x, p), (x, p))
    if p == 0.875:  # keeping all four is also what a softmax over dim 0 gives here: a possible cause, not a name
        assert failed.value.mistake == "" and "exactly on the boundary" in i18n.render(failed.value.message, "en")
    else:
        assert "exactly on the boundary" in i18n.render(failed.value.mistake, "en")


@pytest.mark.parametrize("min_p", [0.25, 0.5])
def test_min_p_with_a_non_strict_comparison_fails_at_the_threshold_and_is_named(min_p):
    x = _binary_min_p()
    filters._check_min_p(S.min_p_filter(x, min_p), (x, min_p))
    probs = S.softmax(x)
    top = probs.amax(-1, keepdim=True)
    wrong = x.masked_fill((probs <= min_p * top) & (probs < top), NEG_INF)  # the top token protected
    assert "exactly equal to min_p * p_max was removed" in _mistake(filters._check_min_p, wrong, (x, min_p))


def test_the_named_cases_hold_the_exact_boundaries():
    assert sum("exactly on a cumulative boundary" in i18n.render(k, "en") for k in filters._top_p_inputs()) == 3
    assert sum("exactly equal to min_p * p_max" in i18n.render(k, "en") for k in filters._min_p_inputs()) == 2


def test_top_k_1_as_the_argmax_drops_a_tie_at_the_top_and_is_named():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.5], [2.0, 1.0, 0.0, -1.0]])
    best = x.argmax(-1, keepdim=True)
    wrong = torch.full_like(x, NEG_INF).scatter(-1, best, x.gather(-1, best))
    filters._check_top_k(S.top_k_filter(x, 1), (x, 1))
    assert "ties at the k-th value" in _mistake(filters._check_top_k, wrong, (x, 1))


# ---------------------------------------------------------------- a new tensor, the input unchanged


def test_an_empty_input_returned_itself_is_an_alias():
    empty = torch.zeros(2, 0)
    [report] = each(lambda x, d: x, ([(empty, -1)],))
    assert report["alias"] is True
    [report] = each(S.softmax, ([(empty, -1)],))
    assert report["alias"] is False


def test_an_input_changed_in_place_is_a_named_mistake():
    x = torch.tensor([1.0, 2.0, 3.0])
    failure = properties._failure(0, (x, 0.5), {"out": x, "changed": ["#0"], "alias": True}, lambda out, args: None)
    assert failure.mistake == IN_PLACE
    check = _checked(lambda out, inputs: None, ["logits", "min_p"])
    with pytest.raises(CheckFailed) as failed:
        check({"out": x, "changed": ["#0"]}, (x, 0.5))
    assert failed.value.mistake == IN_PLACE and "changed `logits` in place" in i18n.render(failed.value.message, "en")


class _NoModel:
    """Enough of a model for max_new_tokens = 0: the call sets and deletes `generate` on it."""


def test_greedy_returning_input_ids_itself_is_named_and_the_solution_copies():
    ids = torch.tensor([[3, 1, 4, 1]])
    result = calls.greedy(lambda model, given, n: given, (_NoModel(), ids, 0))
    assert result["alias"] is True
    assert "you returned `input_ids` itself" in i18n.render(
        _mistake(greedy._check_greedy, result, (_NoModel(), ids, 0)), "en")
    result = calls.greedy(S.greedy_generate, (_NoModel(), ids, 0))
    assert result["alias"] is False and torch.equal(result["ids"], ids)
    greedy._check_greedy(result, (_NoModel(), ids, 0))


# ---------------------------------------------------------------- one mistake per named message


def test_no_alternative_bundles_two_mistakes():
    cases = [(torch.tensor([2.3, 1.5, 3.8, 0.5, 1.2]), t, k, p) for t in (0.7, 1.0, 2.0) for k in (None, 1, 2, 5)
             for p in (None, 0.0, 0.5, 0.9, 1.0)]
    for logits, t, k, p in cases:
        for explanation, _probs in sampling._alternatives(logits, t, k, p):
            assert "Or:" not in i18n.render(explanation, "en"), (t, k, p)


def test_frequencies_that_two_mistakes_explain_name_neither(monkeypatch):
    logits = torch.tensor([2.3, 1.5, 3.8, 0.5, 1.2])
    wrong = torch.softmax(logits * 3, -1)  # far from the right probabilities
    monkeypatch.setattr(sampling, "_alternatives", lambda *args: [("first mistake", wrong), ("second mistake", wrong)])
    draws = torch.multinomial(wrong, 2000, replacement=True, generator=torch.Generator().manual_seed(0)).tolist()
    with pytest.raises(CheckFailed) as failed:
        sampling._check_frequencies({"draws": draws, "again": []}, (logits, 1.0, None, None))
    message = i18n.render(failed.value.message, "en")
    assert failed.value.mistake == "" and "first mistake" in message and "second mistake" in message
    monkeypatch.setattr(sampling, "_alternatives", lambda *args: [("first mistake", wrong)])
    with pytest.raises(CheckFailed) as failed:
        sampling._check_frequencies({"draws": draws, "again": []}, (logits, 1.0, None, None))
    assert failed.value.mistake == "first mistake"


# ---------------------------------------------------------------- ties at the top: any one of them is kept


def _descending_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """A correct top-p read from the top (stable descending sort): with tied top logits it keeps the FIRST of them,
    where transformers' ascending sort keeps the last. The contract says tied tokens may go in any order."""
    probs = torch.softmax(logits, -1)
    sp, idx = probs.sort(dim=-1, descending=True, stable=True)
    remove = ~((sp.cumsum(-1) - sp) < p)
    remove[..., :1] = False
    return logits.masked_fill(remove.scatter(-1, idx, remove), NEG_INF)


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5])
def test_tied_top_tokens_at_a_small_p_accept_any_one_kept(p):
    x = torch.full((2, 8), 0.7816, dtype=torch.float64)
    filters._check_top_p(_descending_top_p(x, p), (x, p))  # failed before: only transformers' own tie order passed
    with pytest.raises(CheckFailed, match="removed every token"):
        filters._check_top_p(torch.full_like(x, NEG_INF), (x, p))
