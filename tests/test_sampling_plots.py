"""Tests for lesson_utils.sampling_plots (chapter 04 figures)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from lesson_utils.sampling_demo import distinct_ngrams, most_repeated_phrase, sequence_logprobs, warped
from lesson_utils.sampling_plots import (interactive_distribution, plot_cumulative_mass, plot_frequencies,
                                         plot_reshaped, show_distribution, widget_frontend_likely)


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


def test_plot_cumulative_mass_marks_each_cutoff_at_its_mass():
    probs = torch.tensor([0.1, 0.5, 0.25, 0.15])
    ax = plot_cumulative_mass(probs, {"top-k 2": 2, "all": 9}, label="toy")
    assert ax.get_xscale() == "log"
    curve = ax.get_lines()[0]
    assert list(curve.get_ydata()) == pytest.approx([0.5, 0.75, 0.9, 1.0])
    dots = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert [float(d.get_ydata()[0]) for d in dots] == pytest.approx([0.75, 1.0])  # 9 is clamped to V = 4
    assert any("top-k 2: 2 kept, 75%" in t.get_text() for t in ax.texts)
    plt.close("all")


def test_warped_runs_transformers_warpers_on_one_row():
    from transformers.generation.logits_process import (RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper,
                                                        TopKLogitsWarper)

    x = torch.tensor([1.0, 4.0, -2.0, 3.0])
    out = warped([TemperatureLogitsWarper(0.5), TopKLogitsWarper(2)], x)
    assert out.shape == (4,)
    assert torch.equal(out, torch.tensor([float("-inf"), 8.0, float("-inf"), 6.0]))
    assert torch.equal(x, torch.tensor([1.0, 4.0, -2.0, 3.0])), "the input is not modified"
    pen = warped([RepetitionPenaltyLogitsProcessor(2.0)], x, torch.tensor([1, 2]))
    assert torch.equal(pen, torch.tensor([1.0, 2.0, -4.0, 3.0]))


def test_sequence_logprobs_reads_the_generated_tokens():
    class Fixed(torch.nn.Module):
        def forward(self, ids):  # logits favour token (id + 1) % 3 after each id
            logits = torch.nn.functional.one_hot((ids + 1) % 3, 3).float() * 2.0
            return type("Out", (), {"logits": logits})()

    seq = torch.tensor([[0, 1, 2, 2]])
    lp = sequence_logprobs(Fixed(), seq, 2)
    high, low = torch.log_softmax(torch.tensor([2.0, 0.0, 0.0], dtype=torch.float64), 0)[:2]
    assert torch.allclose(lp, torch.stack([high, low]))


def test_most_repeated_phrase_and_distinct_ngrams():
    seq = [5, 1, 2, 3, 1, 2, 3, 1, 2, 3, 9]
    assert most_repeated_phrase(seq) == ([1, 2, 3], 3)
    assert most_repeated_phrase([1, 2, 3, 4]) == ([], 0)
    assert distinct_ngrams([1, 2, 3, 4]) == 1.0
    assert distinct_ngrams([1, 2, 1, 2, 1]) == 0.5


def test_plot_path_recap_draws_every_stage_and_the_given_numbers():
    from lesson_utils.sampling_plots import RECAP_STAGES, plot_path_recap

    ax = plot_path_recap({"logits": "49,152 scores", "greedy": "' cat'"})
    boxes = {t.get_gid(): t.get_text() for t in ax.texts if t.get_gid()}
    assert set(boxes) == set(RECAP_STAGES)
    assert "[49,152 scores]" in boxes["logits"] and "[' cat']" in boxes["greedy"] and boxes["h"].count("\n") == 2
    assert boxes["tying"].count("\n1. ") == 1 and "3. " in boxes["tying"]
    arrows = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    assert len(arrows) == 8  # six along the path, the tie, and its link to the benefits
    plt.close("all")


def test_plot_path_recap_rejects_an_unknown_stage():
    from lesson_utils.sampling_plots import plot_path_recap

    with pytest.raises(ValueError, match="unknown stage"):
        plot_path_recap({"logit": "x"})
