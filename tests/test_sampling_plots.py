"""Tests for lesson_utils.sampling_plots (chapter 04 figures)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import torch

from lesson_utils.sampling_plots import (interactive_distribution, plot_frequencies, plot_reshaped,
                                         show_distribution, widget_frontend_likely)


class FakeTokenizer:
    def decode(self, ids):
        return " ".join(f"t{i}" for i in ids)


def _warp(logits, temperature, top_k, top_p):
    x = logits / temperature
    if top_k:
        x = x.masked_fill(x < torch.topk(x, min(top_k, x.numel())).values[-1], float("-inf"))
    return torch.softmax(x, -1)


def test_plot_reshaped_draws_two_bars_per_token_and_marks_removed():
    ax = plot_reshaped(["a", "b", "c"], [0.5, 0.3, 0.2], [0.6, 0.4, 0.0], "title")
    assert len(ax.patches) == 6
    assert ax.get_title() == "title"
    assert any(line.get_marker() == "x" for line in ax.get_lines())
    plt.close("all")


def test_plot_frequencies_bars():
    ax = plot_frequencies(["a", "b"], [0.7, 0.3], [0.68, 0.32])
    assert len(ax.patches) == 4
    plt.close("all")


def test_show_distribution_counts_kept_tokens():
    logits = torch.arange(20.0)
    ax = show_distribution(logits, FakeTokenizer(), _warp, 1.0, 5, 1.0, top=8)
    assert "5 tokens kept" in ax.get_title()
    plt.close("all")


def test_no_widget_frontend_outside_a_kernel():
    assert widget_frontend_likely() is False


def test_interactive_falls_back_to_a_static_figure(capsys):
    interactive_distribution(torch.arange(30.0), FakeTokenizer(), _warp, top=6)
    assert "static panels" in capsys.readouterr().out
    plt.close("all")


def test_interactive_builds_sliders_when_asked(capsys):
    interactive_distribution(torch.arange(30.0), FakeTokenizer(), _warp, top=6, interactive=True)
    assert "VBox" in capsys.readouterr().out  # outside a kernel, display() prints the widget's repr
    plt.close("all")
