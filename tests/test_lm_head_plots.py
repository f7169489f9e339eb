"""The chapter 02 figures draw exactly the numbers they are given."""
import matplotlib

matplotlib.use("Agg")  # tests draw off-screen; notebooks keep their own backend
import matplotlib.pyplot as plt
import pytest
import torch

from lesson_utils.lm_head_plots import (
    NEGATIVE,
    POSITIVE,
    plot_contributions,
    plot_cost_ratio,
    plot_cumulative_contributions,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_contribution_bars_follow_sign_and_sum():
    c = torch.tensor([0.5, -0.25, 1.0, 0.0])
    ax = plot_contributions(c)
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx(c.tolist())
    colors = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    expected = [POSITIVE, NEGATIVE, POSITIVE, POSITIVE]
    assert colors == [matplotlib.colors.to_hex(e) for e in expected]
    assert "1.250" in ax.get_title()


def test_cumulative_ends_at_the_logit():
    c = torch.tensor([0.1, -2.0, 3.0, 0.5])
    ax = plot_cumulative_contributions(c)
    y = ax.lines[0].get_ydata()
    assert list(y) == pytest.approx([3.0, 1.0, 1.5, 1.6])
    assert ax.lines[1].get_ydata()[0] == pytest.approx(1.6)


def test_cost_ratio_has_reference_line():
    ax = plot_cost_ratio([1, 4, 16], [1.0, 1.5, 3.0])
    assert list(ax.lines[0].get_ydata()) == [1, 4, 16]
    assert list(ax.lines[1].get_ydata()) == [1.0, 1.5, 3.0]
    assert ax.get_xscale() == "log"
