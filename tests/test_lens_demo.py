"""Tests for lesson_utils.lens_demo (chapter 06 helpers)."""
import torch

import pytest

from lesson_utils.lens_demo import FIT_TEXT, assert_ranks_portable, first_layer_from, gap_to_nearest


def test_first_layer_from_finds_the_start_of_the_final_run():
    assert first_layer_from([False, True, False, True, True]) == 3
    assert first_layer_from([True, True]) == 0
    assert first_layer_from([True, False]) == 2
    assert first_layer_from(torch.tensor([False, True])) == 1


def test_gap_to_nearest_ignores_the_entry_itself():
    scores = torch.tensor([0.0, 1.0, 1.25, 3.0])
    assert gap_to_nearest(scores, 1) == 0.25
    assert gap_to_nearest(scores, 3) == 1.75


def test_fit_text_is_fixed_english_prose():
    assert len(FIT_TEXT) > 2000 and "Paris" not in FIT_TEXT and "capital of" not in FIT_TEXT


def test_assert_ranks_portable_fails_only_near_a_tie():
    scores = torch.tensor([[0.0, 1.0, 1.5], [0.0, 1.0, 1.00001]])
    assert_ranks_portable(scores[0], 1, min_gap=0.1)
    with pytest.raises(AssertionError, match="could flip"):
        assert_ranks_portable(scores, 1, min_gap=1e-4)
