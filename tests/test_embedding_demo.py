"""Tests for lesson_utils.embedding_demo (the sample text and figures of notebook 01)."""
import matplotlib
import pytest
import torch

from lesson_utils.embedding_demo import (
    SAMPLE_TEXTS, id_counts, plot_gradient_rows, plot_sparse_updates, plot_timings, rectangular_batch,
    sample_token_ids,
)

matplotlib.use("Agg")  # tests draw figures without a display


class WordTokenizer:
    """A stand-in tokenizer: one id per whitespace-separated word, ids given in order of first sight."""

    def __init__(self):
        self.vocab: dict[str, int] = {}

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [self.vocab.setdefault(w, len(self.vocab)) for w in text.split()]}

    def decode(self, ids):
        words = {i: w for w, i in self.vocab.items()}
        return " ".join(words[i] for i in ids)


def test_sample_has_six_documents_of_real_prose():
    assert len(SAMPLE_TEXTS) == 6
    assert all(len(text.split()) >= 60 for text in SAMPLE_TEXTS.values())


def test_sample_token_ids_are_1d_long_tensors():
    ids = sample_token_ids(WordTokenizer())
    assert list(ids) == list(SAMPLE_TEXTS)
    for name, t in ids.items():
        assert t.dtype == torch.long and t.dim() == 1 and len(t) == len(SAMPLE_TEXTS[name].split())


def test_rectangular_batch_truncates_and_stacks():
    seqs = [torch.arange(5), torch.arange(10, 17)]
    batch = rectangular_batch(seqs, 4)
    assert batch.tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    with pytest.raises(ValueError, match="at least 6 tokens"):
        rectangular_batch(seqs, 6)


def test_id_counts_counts_every_id_of_any_shape():
    counts = id_counts(torch.tensor([[3, 7], [3, 0]]), 10)
    assert counts.shape == (10,) and counts.tolist() == [1, 0, 0, 2, 0, 0, 0, 1, 0, 0]


def test_plots_draw_labelled_axes():
    grad = torch.zeros(10, 4)
    grad[3], grad[7] = 2.0, 1.0
    ax = plot_gradient_rows(grad, [3, 7, 3], title="t")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[3].endswith("(id used 2x)") and labels[0] == "row 0"
    ax = plot_gradient_rows(grad, [3, 7, 3], annotate=True, row_sums=True)
    texts = [t.get_text() for t in ax.texts]
    assert " sum 8" in texts and " sum 4" in texts and " sum 0" in texts and "-0" not in " ".join(texts)
    assert texts.count("2") == 4 and texts.count("1") == 4
    ax = plot_timings(["gather", "product"], [1e-5, 1e-1])
    assert ax.get_xscale() == "log" and "microseconds" in ax.get_xlabel()
    tok = WordTokenizer()
    tok("a b c d")
    fig = plot_sparse_updates(torch.tensor([3, 1, 0, 2]), torch.tensor([0.5, 0.2, 0.0, 0.4]), tokenizer=tok)
    assert len(fig.axes) == 2
    import matplotlib.pyplot as plt

    plt.close("all")
