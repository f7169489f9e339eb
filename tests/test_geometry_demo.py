"""Part 2 of chapter 05 starts from `usable_rows` and `grouped_words`: they must match part 1's recipe."""
import pytest
import torch

from lesson_utils.geometry_demo import WORD_GROUPS, grouped_words, usable_rows


def test_usable_rows_drops_specials_and_the_shared_cluster():
    g = torch.Generator().manual_seed(0)
    E = torch.randn(20, 8, generator=g)
    E[[9, 13]] = E[5].clone()  # three identical rows: the largest shared group
    E[15] = E[5] * 2 + 0.001 * torch.randn(8, generator=g)  # same direction, longer: also in the cluster
    usable = usable_rows(E, special_ids=[0, 1])
    assert usable.dtype == torch.bool and usable.shape == (20,)
    assert sorted((~usable).nonzero().flatten().tolist()) == [0, 1, 5, 9, 13, 15]
    assert usable_rows(E, special_ids=[], threshold=1.1).all()


def test_usable_rows_rejects_a_vector():
    with pytest.raises(ValueError, match=r"\[V, d\]"):
        usable_rows(torch.zeros(5), special_ids=[])


def test_grouped_words_are_aligned():
    words, groups = grouped_words()
    assert len(words) == len(groups) == 57
    assert words[0] == " one" and groups[0] == "numbers" and groups[-1] == "capitals"
    assert list(dict.fromkeys(groups)) == list(WORD_GROUPS)
