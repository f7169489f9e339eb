"""The chapter 03 demo helpers: generated corpus, batches, training loop."""
import torch
from torch import nn

from lesson_utils.tying_demo import random_batch, single_thread, smooth, token_losses, toy_corpus, train_lm


def test_corpus_is_deterministic_and_well_formed():
    a, b = toy_corpus(200, seed=3), toy_corpus(200, seed=3)
    assert torch.equal(a.ids, b.ids) and a.vocab == b.vocab
    assert len(set(a.vocab)) == len(a.vocab) == len(a.word_class)
    assert int(a.ids.max()) < len(a.vocab) and int((a.ids == 0).sum()) == 200  # one "." per sentence
    classes = [a.word_class[i] for i in a.ids[:4].tolist()]
    assert classes[0] == "DET" and "NOUN" in classes
    assert not torch.equal(toy_corpus(200, seed=4).ids[:50], a.ids[:50])


def test_random_batch_targets_are_shifted_inputs():
    ids = torch.arange(100)
    x, y = random_batch(ids, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)


class Bigram(nn.Module):
    def __init__(self, V):
        super().__init__()
        self.table = nn.Embedding(V, V)

    def forward(self, ids):
        return self.table(ids)


def test_training_lowers_the_loss_and_restores_threads():
    corpus = toy_corpus(300, seed=0)
    V = len(corpus.vocab)
    threads = torch.get_num_threads()
    torch.manual_seed(0)
    model = Bigram(V)
    before = float(token_losses(model, corpus.ids, 16)[0].mean())
    curve = train_lm(model, corpus.ids, steps=30, batch_size=8, context=16, lr=0.1, seed=0)
    losses, inputs = token_losses(model, corpus.ids, 16)
    assert len(curve) == 30 and float(losses.mean()) < before
    assert losses.shape == inputs.shape and torch.get_num_threads() == threads
    with single_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == threads


def test_smooth_is_a_running_mean():
    assert smooth([1.0, 3.0, 5.0, 7.0], window=2) == [1.0, 2.0, 4.0, 6.0]


def test_tiny_lm_tied_and_untied():
    """Chapter 03's TinyLM: tied shares one Parameter, untied holds one more V x d table; both give [B, T, V]."""
    from lesson_utils.tying_demo import TinyLM

    torch.manual_seed(0)
    tied, untied = TinyLM(50, d=8, context=4, tied=True), TinyLM(50, d=8, context=4, tied=False)
    assert tied.head.weight is tied.embed.weight and untied.head.weight is not untied.embed.weight
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(untied) - count(tied) == 50 * 8
    assert tied(torch.zeros(2, 4, dtype=torch.long)).shape == (2, 4, 50)
    assert abs(float(tied.embed.weight.detach().std()) - 0.02) < 0.005


def test_two_decimals_never_prints_negative_zero():
    from lesson_utils.tying_demo import two_decimals

    assert two_decimals(-0.001) == "0.00" and two_decimals(-0.001, signed=True) == "+0.00"
    assert two_decimals(3.456) == "3.46" and two_decimals(-0.04, signed=True) == "-0.04"


def test_cosine_band_edges():
    from lesson_utils.tying_demo import cosine_band

    assert [cosine_band(c) for c in (0.9, 0.61, 0.6, 0.3, 0.25, 0.24, -0.1)] == [
        "above 0.6", "above 0.6", "0.25 to 0.6", "0.25 to 0.6", "0.25 to 0.6", "below 0.25", "below 0.25"]


def test_reference_facts_counts_on_meta_and_flips_by_one_table():
    from lesson_utils.reference_models import REFERENCE_CONFIGS
    from lesson_utils.tying_demo import reference_facts

    facts = reference_facts()
    assert list(facts) == list(REFERENCE_CONFIGS)
    assert all(f["device"] == "meta" for f in facts.values())
    assert facts["GPT-2 small"]["total"] == 124_439_808 and facts["GPT-2 small"]["tied"]
    assert facts["Qwen2.5-7B"]["tied"] is False and facts["Qwen2.5-7B"]["total"] == 7_615_616_512
    assert set(n for n, f in facts.items() if "vision" in f) == {"Qwen3.5-0.8B"}
    for name, f in facts.items():
        extra = f["V"] if name == "BERT-base" else 0  # BERT's untied decoder brings its own bias
        assert abs(f["flipped"] - f["total"]) == f["V"] * f["d"] + extra, name
