"""Tests for lesson_utils.portable_n24d (numbers printed the same on every CPU)."""
import pytest
import torch

from lesson_utils.portable_n24d import portable_format


def test_portable_format_rounds_and_never_prints_negative_zero():
    assert portable_format(3.14159, 2) == "3.14"
    assert portable_format(torch.tensor(17.6311), 2) == "17.63"
    assert portable_format(-1e-9, 3) == "0.000"
    assert portable_format(-0.26, 1) == "-0.3"


def test_portable_format_refuses_a_rounding_edge():
    with pytest.raises(ValueError, match="rounding edge"):
        portable_format(0.125, 2)
    with pytest.raises(ValueError, match="rounding edge"):
        portable_format(2.0449, 2, margin=0.1)
