"""grading/checks/memo.py: a reference remembered per case input is reused only for the very same, unchanged input."""
from __future__ import annotations

import gc

import torch

from grading.checks.compare import expect_tensor
from grading.checks.memo import Later, evaluated, per_input
from grading.model import CheckFailed


def counted():
    calls = []

    @per_input
    def double(x, k=1):
        calls.append(k)
        return x * 2 * k

    return double, calls


def test_the_same_input_is_computed_once_and_other_values_of_an_argument_apart():
    double, calls = counted()
    x = torch.arange(4.0)
    first = double(x)
    assert double(x) is first
    assert torch.equal(double(x, k=3), x * 6) and len(calls) == 2
    assert double(x, k=3.0) is not None and len(calls) == 3  # 3.0 and 3 are different keys
    assert double(x, k=True) is not None and len(calls) == 4  # True is not 1


def test_an_input_changed_in_place_is_computed_again():
    double, calls = counted()
    x = torch.arange(4.0)
    double(x)
    x.add_(1)
    assert torch.equal(double(x), torch.tensor([2.0, 4.0, 6.0, 8.0])) and len(calls) == 2


def test_a_freed_input_is_forgotten_and_a_new_tensor_at_its_address_is_not_taken_for_it():
    double, calls = counted()
    for value in range(20):  # CPython reuses ids of freed objects: each new tensor must still get its own result
        out = double(torch.full((3,), float(value)))
        assert torch.equal(out, torch.full((3,), 2.0 * value))
        del out
        gc.collect()
    assert len(calls) == 20


def test_a_module_whose_weights_changed_is_computed_again():
    calls = []

    @per_input
    def out(model, x):
        calls.append(1)
        return model(x)

    model, x = torch.nn.Linear(2, 1), torch.ones(1, 2)
    first = out(model, x)
    assert out(model, x) is first
    with torch.no_grad():
        model.weight.zero_()
    assert out(model, x) is not first and len(calls) == 2


def test_later_mistakes_are_computed_only_when_a_check_fails():
    calls = []

    @per_input
    def mistakes(x):
        calls.append(1)
        return evaluated([("doubled", lambda: x * 2), ("cannot be computed here", lambda: 1 / 0)])

    x = torch.arange(3.0)
    expect_tensor(x.clone(), x, mistakes=Later(mistakes, x))
    assert calls == []
    try:
        expect_tensor(x * 2, x, mistakes=Later(mistakes, x))
    except CheckFailed as exc:
        assert exc.mistake == "doubled"
    else:
        raise AssertionError("a wrong result passed")
    assert calls == [1]
