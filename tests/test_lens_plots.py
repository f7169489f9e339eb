"""Tests for lesson_utils.lens_plots (chapter 06 figures)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from lesson_utils.lens_plots import plot_by_layer, plot_token_grid  # noqa: E402


def test_token_grid_annotates_every_cell_bottom_up():
    labels = [["a", "b", "c"], ["d", "e", "f"]]
    ax = plot_token_grid(labels, [[0.1, 0.9, 0.5], [0.2, 0.3, 1.0]], ["x0", "x1", "x2"], title="t")
    texts = {(round(t.get_position()[0]), round(t.get_position()[1])): t.get_text() for t in ax.texts}
    assert texts == {(c, r): labels[r][c] for r in range(2) for c in range(3)}
    assert ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x0", "x1", "x2"]
    image = ax.images[0]
    assert image.origin == "lower"
    plt.close(ax.figure)


def test_token_grid_rejects_mismatched_labels():
    with pytest.raises(ValueError):
        plot_token_grid([["a"]], [[0.1, 0.2]], ["x0", "x1"])


def test_by_layer_one_line_per_series_and_log_scale():
    ax = plot_by_layer({"p": [3, 2, 1], "q": [1, 10, 100]}, "rank", logy=True)
    assert len(ax.lines) == 2
    assert list(ax.lines[1].get_xdata()) == [0, 1, 2]
    assert ax.get_yscale() == "log"
    assert ax.get_legend() is not None
    plt.close(ax.figure)


def test_by_layer_start_and_label():
    ax = plot_by_layer({"u": [5, 6]}, "size", start=1, xlabel="block")
    assert list(ax.lines[0].get_xdata()) == [1, 2]
    assert ax.get_xlabel() == "block" and ax.get_legend() is None
    plt.close(ax.figure)


def test_token_grid_labels_are_readable_and_the_figure_grows_with_them():
    labels = [["'␣capital'"] * 5 for _ in range(31)]
    ax = plot_token_grid(labels, [[0.5] * 5] * 31, ["a"] * 5)
    assert min(t.get_fontsize() for t in ax.texts) >= 10
    assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 9
    width, height = ax.figure.get_size_inches()
    assert width / 5 > 1.0 and height / 31 > 0.25  # room for a 10-character label in every cell
    plt.close(ax.figure)
