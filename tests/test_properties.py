"""The generated inputs (grading/checks/properties.py, chapter 04's grading/checks/ch04_sampling/generated.py): the
same on every run, within each stub's contract, covering the edge cases listed there; the smallest failure shown."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from grading import i18n, model
from grading.checks import properties
from grading.checks.ch04_sampling import generated
from grading.worker.calls.base import each

from answers import needs_answers

REPO = Path(__file__).resolve().parent.parent
NEG_INF = float("-inf")


def _tensors(examples):
    return [args[0] for args in examples]


def test_examples_are_the_same_in_a_fresh_process_that_imported_other_modules(tmp_path):
    """Derandomized, and Hypothesis' pool of constants read from the process's own modules left out: a notebook
    (which imported lesson_utils) and the command line draw the same inputs. Nothing is written to the folder."""
    code = ("import hashlib, sys; sys.path.insert(0, %r); %s"
            "from grading.checks.ch04_sampling import generated as g; "
            "print(hashlib.sha256(repr([[(a.tolist(), a.dtype, a.stride()) if hasattr(a, 'stride') else a "
            "for a in e] for e in g.top_p_examples() + g.softmax_examples()]).encode()).hexdigest())")
    plain = subprocess.run([sys.executable, "-c", code % (str(REPO), "")], cwd=tmp_path, capture_output=True, text=True)
    other = subprocess.run([sys.executable, "-c", code % (str(REPO), "import lesson_utils, grading.engine.scheduler; ")],
                           cwd=tmp_path, capture_output=True, text=True)
    assert plain.returncode == 0 and other.returncode == 0, plain.stderr + other.stderr
    assert plain.stdout == other.stdout
    assert list(tmp_path.iterdir()) == [], "generating inputs wrote into the current folder"


def test_the_generated_inputs_cover_the_edge_cases_the_contract_allows():
    soft = generated.softmax_examples()
    assert {x.dtype for x in _tensors(soft)} == set(properties.FLOAT_DTYPES)
    assert any(x.numel() == 0 for x in _tensors(soft)) and any(x.numel() == 1 for x in _tensors(soft))
    assert any(not x.is_contiguous() for x in _tensors(soft))
    assert any(0 in x.stride() for x in _tensors(soft))  # an expanded view
    assert any(bool(torch.isneginf(x).any()) for x in _tensors(soft))
    assert {d >= 0 for _x, d in soft} == {True, False}
    for x, dim in soft:  # softmax of a slice with no finite entry is left open by the contract: never generated
        if x.numel():
            assert bool(torch.isfinite(x).any(dim).all()), (x, dim)
    ties = [x for x in _tensors(soft) if x.numel() > 1 and x.unique().numel() < x.numel()]
    assert ties

    top_k = generated.top_k_examples()
    assert {x.dtype for x in _tensors(top_k)} == set(properties.FLOAT_DTYPES)
    assert any(k == 1 for _x, k in top_k) and any(k > x.shape[-1] for x, k in top_k)
    assert any(k == x.shape[-1] for x, k in top_k)
    assert all(k >= 1 for _x, k in top_k)

    top_p = generated.top_p_examples()
    ps = {p for _x, p in top_p}
    assert {0.0, 1.0} <= ps and all(0 <= p <= 1 for p in ps)
    assert any(p not in generated.TOP_P for p in ps)  # p on a cumulative boundary of the row's probabilities
    assert {x.dtype for x in _tensors(top_p)} == {torch.float32, torch.float64}
    assert any(x.dim() > 1 and x.shape[0] == 0 for x in _tensors(top_p))  # a batch of no rows

    min_p = generated.min_p_examples()
    assert {0.0, 1.0} <= {m for _x, m in min_p}
    scales = [x for x in _tensors(min_p) if x.dim() > 1 and x.shape[0] > 1 and x.numel()
              and bool(torch.isfinite(x).all()) and float(x.abs().amax(-1).max()) > 1e3 * float(x.abs().amax(-1).min())]
    assert scales, "no rows of very different scales"


def test_examples_are_ordered_small_to_large_with_empty_inputs_last():
    sizes = [properties.size(e) for e in generated.top_k_examples()]
    assert sizes == sorted(sizes)
    first = generated.top_k_examples()[0][0]
    assert first.numel() == 1


def _reports(fn, examples):
    return each(fn, (examples,))


@needs_answers
def test_the_reference_passes_and_the_smallest_failure_is_shown():
    from solutions.ch04_sampling import top_k_filter

    examples = generated.top_k_examples()
    properties.check_examples(_reports(top_k_filter, examples), examples, generated._check_top_k,
                              generated.top_k_reference)

    def keeps_exactly_k(logits, k):  # ties at the k-th value dropped
        k = min(k, logits.shape[-1])
        top = torch.topk(logits, k, dim=-1)
        return torch.full_like(logits, NEG_INF).scatter(-1, top.indices, top.values)

    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(keeps_exactly_k, examples), examples, generated._check_top_k,
                                  generated.top_k_reference, ["logits", "k"])
    text = i18n.render(failed.value.message, "en")
    assert "generated inputs fail; the smallest:" in text and "logits = [" in text and "k = " in text
    assert "your result:" in text and "expected:" in text
    assert "ties at the k-th value" in i18n.render(failed.value.mistake, "en")


@needs_answers
def test_returning_the_input_and_raising_are_reported_with_their_example():
    from solutions.ch04_sampling import top_k_filter

    examples = [(torch.tensor([1.0, 2.0]), 5), (torch.tensor([[1.0, 2.0, 0.0]]), 1)]
    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(lambda x, k: x if k >= x.shape[-1] else top_k_filter(x, k), examples),
                                  examples, generated._check_top_k)
    assert failed.value.mistake == properties.ALIAS  # the only failure is the alias: named
    assert "1 of 2 generated inputs fail" in i18n.render(failed.value.message, "en")

    def raises_on_rows(x, k):
        if x.dim() > 1:
            raise IndexError("rows")
        return top_k_filter(x, k)

    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(raises_on_rows, examples), examples, generated._check_top_k)
    assert "IndexError: rows" in i18n.render(failed.value.message, "en") and failed.value.mistake == ""


def test_a_stub_is_not_attempted_not_wrong():
    def stub(*_args):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        each(stub, ([(torch.zeros(2), 1)],))


def test_an_in_place_write_to_one_element_of_a_large_tensor_is_seen():
    from grading.worker.calls.unchanged import COPY_MAX, changed_inputs, snapshot

    for dtype in (torch.float32, torch.bfloat16, torch.float64, torch.int64, torch.uint8):
        big = torch.zeros(COPY_MAX * 3 + 7, dtype=dtype)
        before = snapshot((big,))
        big.data[COPY_MAX + 1] = 1  # through .data: no version bump, and between the old sample's strides
        assert changed_inputs(before) == ["#0"], dtype


@needs_answers
def test_a_learner_returning_the_input_fails_the_judge_with_its_named_mistake(tmp_path):
    """Through the sandbox: the generated case of top_k_filter names the mistake the named cases cannot see."""
    from grading.engine import scheduler

    solution = (REPO / "solutions" / "ch04_sampling.py").read_text(encoding="utf-8")
    (tmp_path / "ch04_sampling.py").write_text(solution + textwrap.dedent("""

        def top_k_filter(logits, k):
            if k >= logits.shape[-1]:
                return logits
            return logits.masked_fill(logits < torch.topk(logits, k, dim=-1).values[..., -1:], float("-inf"))
    """), encoding="utf-8")
    [result] = scheduler.grade(tmp_path, "top_k_filter", lang="en")
    assert result.status == model.WRONG
    failed = [c for c in result.cases if not c.passed]
    assert [c.name.startswith("generated inputs") for c in failed] == [True]
    assert "you returned the input tensor itself" in failed[0].mistake
    assert os.listdir(tmp_path) == ["ch04_sampling.py"] or ".hypothesis" not in os.listdir(tmp_path)


@needs_answers
def test_a_squeezed_result_is_named_only_when_every_failure_is_one():
    from solutions.ch04_sampling import softmax

    examples = [(torch.tensor([[1.0, 2.0]]), -1), (torch.tensor([3.0, 1.0]), 0), (torch.tensor([[[0.5, 0.0]]]), -1)]
    with pytest.raises(model.CheckFailed) as failed:
        properties.check_examples(_reports(lambda x, d: softmax(x, d).squeeze(), examples), examples,
                                  generated._check_softmax, generated.softmax_reference)
    assert failed.value.mistake == properties.SQUEEZED
    assert "2 of 3 generated inputs fail" in i18n.render(failed.value.message, "en")

    with pytest.raises(model.CheckFailed) as failed:  # one failure is something else: nothing is named
        properties.check_examples(_reports(lambda x, d: softmax(x, d).squeeze() if x.dim() > 1 else softmax(x, d) * 2,
                                           examples), examples, generated._check_softmax, generated.softmax_reference)
    assert failed.value.mistake == ""
