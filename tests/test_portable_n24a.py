import math

import pytest
import torch

from lesson_utils.portable_n24a import clean_round, exact_rank


def test_clean_round_drops_negative_zero_and_rounds():
    assert math.copysign(1.0, clean_round(-1e-9, 3)) == 1.0
    assert f"{clean_round(-1e-9, 3):.3f}" == "0.000"
    assert clean_round(torch.tensor(2.95149), 3) == 2.951
    assert clean_round(-0.51, 1) == -0.5


def test_exact_rank_counts_strictly_larger_scores():
    scores = torch.tensor([0.5, 3.0, 1.0, 2.0])
    assert exact_rank(scores, 1) == 0
    assert exact_rank(scores, 3) == 1
    assert exact_rank(scores, 0) == 3


def test_exact_rank_refuses_a_near_tie():
    with pytest.raises(ValueError, match="within"):
        exact_rank(torch.tensor([1.0, 1.0 + 1e-6, 0.0]), 0)
    assert exact_rank(torch.tensor([1.0, 1.0 + 1e-6, 0.0]), 0, margin=1e-7) == 1


def test_exact_rank_needs_one_dimension():
    with pytest.raises(ValueError, match="1-D"):
        exact_rank(torch.zeros(2, 2), 0)


def test_exact_rank_accepts_a_near_tie_beyond_exact_below():
    scores = torch.cat([torch.linspace(10, 5, 20), torch.tensor([1.0, 1.0 + 1e-6])])
    assert exact_rank(scores, 20, exact_below=10) == 21
    with pytest.raises(ValueError):
        exact_rank(scores, 20, exact_below=30)
