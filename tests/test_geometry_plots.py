"""The chapter 05 word-map plot labels every point, colours by group and accepts 2-D and 3-D coordinates."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from lesson_utils.geometry_plots import group_colors, plot_word_map  # noqa: E402

WORDS = [" one", " two", " red", " blue", " cat"]
GROUPS = ["numbers", "numbers", "colours", "colours", "animals"]


def test_group_colors_one_per_group_in_order():
    colors = group_colors(GROUPS)
    assert list(colors) == ["numbers", "colours", "animals"]
    assert len(set(colors.values())) == 3


@pytest.mark.parametrize("dims", [2, 3])
def test_every_word_labelled_and_every_group_in_legend(dims):
    coords = torch.randn(len(WORDS), dims, generator=torch.Generator().manual_seed(0))
    ax = plot_word_map(coords, WORDS, GROUPS, title="t", axis_labels=["x", "y", "z"][:dims])
    assert sorted(t.get_text().strip() for t in ax.texts) == sorted(w.strip() for w in WORDS)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["numbers", "colours", "animals"]
    assert ax.get_xlabel() == "x" and ax.get_title() == "t"
    plt.close("all")


@pytest.mark.parametrize("dims", [2, 3])
def test_labels_of_a_tight_cluster_do_not_overprint_and_stay_tied_to_their_points(dims):
    coords = torch.zeros(len(WORDS), dims) + 1e-3 * torch.arange(len(WORDS))[:, None]  # five almost equal points
    coords = torch.cat([coords, torch.ones(1, dims)])  # and one far away, so the cluster is small on screen
    ax = plot_word_map(coords, WORDS + [" far"], GROUPS + ["far"], fontsize=9)
    plt.tight_layout()
    ax.figure.canvas.draw()
    boxes = [Text.get_window_extent(t) for t in ax.texts]  # the words only, not their leader lines
    assert len(boxes) == 6
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    moved = [t for t in ax.texts if t.arrow_patch is not None]
    assert moved, "labels pushed away from a crowded point get a leader line"
    plt.close("all")


def test_rejects_bad_shapes():
    with pytest.raises(ValueError):
        plot_word_map(torch.zeros(5, 4), WORDS, GROUPS)
    with pytest.raises(ValueError):
        plot_word_map(torch.zeros(4, 2), WORDS, GROUPS)


def test_compact_png_is_a_smaller_palette_png_of_the_same_size():
    import base64
    import io

    from PIL import Image

    from lesson_utils.geometry_plots import compact_png, use_compact_figures

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.hexbin(*torch.randn(2, 5000, generator=torch.Generator().manual_seed(1)).tolist(), gridsize=30, cmap="Blues")
    full = io.BytesIO()
    fig.savefig(full, format="png", dpi=fig.dpi, bbox_inches="tight")
    small = base64.b64decode(compact_png(fig))
    image = Image.open(io.BytesIO(small))
    assert image.mode == "P" and image.size == Image.open(io.BytesIO(full.getvalue())).size
    assert len(small) < len(full.getvalue())
    assert compact_png(plt.figure()) is None
    assert use_compact_figures() is False  # no IPython kernel under pytest
    plt.close("all")


def _overlap(a, sa, b, sb):
    return min(a[0] + sa[0], b[0] + sb[0]) > max(a[0], b[0]) and min(a[1] + sa[1], b[1] + sb[1]) > max(a[1], b[1])


def test_spread_labels_separates_stacked_labels_and_stays_near_their_points():
    from lesson_utils.geometry_plots import spread_labels

    points = [(0.5, 0.5)] * 6 + [(0.52, 0.51), (0.1, 0.9)]
    sizes = [(0.08, 0.03)] * len(points)
    placed = spread_labels(points, sizes)
    assert len(placed) == len(points)
    assert not any(_overlap(placed[i], sizes[i], placed[j], sizes[j])
                   for i in range(len(points)) for j in range(i + 1, len(points)))
    assert all(abs(x - px) < 0.3 and abs(y - py) < 0.3 for (x, y), (px, py) in zip(placed, points))
    assert placed[-1] == pytest.approx((0.108, 0.885))  # a lone label stays where it started
    assert spread_labels(points, sizes) == placed  # deterministic


def test_plot_word_zoom_labels_only_the_points_inside_without_overlap():
    from lesson_utils.geometry_plots import plot_word_zoom

    coords = torch.tensor([[0.0, 0.0], [0.01, 0.0], [0.0, 0.01], [0.01, 0.01], [5.0, 5.0]])
    fig, ax = plt.subplots(figsize=(4, 3))
    plot_word_zoom(coords, WORDS, GROUPS, ax=ax, xlim=(-0.1, 0.2), ylim=(-0.1, 0.1), title="zoom")
    assert sorted(t.get_text() for t in ax.texts) == ["blue", "one", "red", "two"]
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in ax.texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    with pytest.raises(ValueError):
        plot_word_zoom(torch.zeros(5, 3), WORDS, GROUPS, ax=ax, xlim=(0, 1), ylim=(0, 1))
    plt.close("all")
