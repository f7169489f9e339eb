"""Chapter 03 demo helpers: a generated toy corpus and a small training loop.

The corpus is made up here, by code: a tiny grammar (determiner, adjective, noun,
verb, preposition) over invented words, with Zipf-distributed word choices so that
a few words are frequent and most are rare, as in real text. Nothing is copied
from any text source.
"""
from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .edition import _
from .portable import clean_round

DETERMINERS = ["the", "a", "this", "that", "every", "some", "my", "no"]
PREPOSITIONS = ["on", "in", "under", "near", "with", "behind", "over", "past", "beside", "around", "from", "into"]
CONTENT_CLASSES = {"NOUN": (500, ""), "VERB": (250, "s"), "ADJ": (150, "y")}  # class: (number of words, suffix)
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"


@dataclass
class ToyCorpus:
    """Token ids of a generated corpus, its vocabulary and each word's class."""

    vocab: list[str]
    word_class: list[str]
    ids: torch.Tensor  # [N] int64

    def decode(self, ids) -> str:
        return " ".join(self.vocab[int(i)] for i in ids)


def _invented_words(n: int, generator: torch.Generator) -> list[str]:
    """n distinct two-syllable words (consonant-vowel twice), in a seeded random order."""
    syllables = [c + v for c, v in itertools.product(CONSONANTS, VOWELS)]
    stems = [a + b for a, b in itertools.product(syllables, syllables)]
    order = torch.randperm(len(stems), generator=generator)[:n]
    return [stems[int(i)] for i in order]


def toy_corpus(n_sentences: int = 6000, seed: int = 0) -> ToyCorpus:
    """Sentences like 'the X Y a Z .' (optionally with adjectives and a prepositional phrase)."""
    g = torch.Generator().manual_seed(seed)
    vocab, word_class = ["."], ["END"]
    members: dict[str, list[int]] = {}

    def add(cls: str, words: list[str]) -> None:
        members[cls] = list(range(len(vocab), len(vocab) + len(words)))
        vocab.extend(words)
        word_class.extend([cls] * len(words))

    add("DET", DETERMINERS)
    add("PREP", PREPOSITIONS)
    stems = iter(_invented_words(sum(n for n, _ in CONTENT_CLASSES.values()), g))
    for cls, (n, suffix) in CONTENT_CLASSES.items():
        add(cls, [next(stems) + suffix for _ in range(n)])

    def zipf_draws(cls: str, k: int) -> list[int]:
        ranks = torch.arange(1, len(members[cls]) + 1, dtype=torch.float64)
        picks = torch.multinomial(1 / ranks, k, replacement=True, generator=g)
        return [members[cls][int(i)] for i in picks]

    n = 3 * n_sentences  # enough draws of each class for every sentence
    draws = {cls: iter(zipf_draws(cls, n)) for cls in members}
    coins = torch.rand(n_sentences, 4, generator=g).tolist()
    ids: list[int] = []
    for adj1, adj2, adj3, prep in coins:
        def noun_phrase(with_adj: bool) -> list[int]:
            return [next(draws["DET"])] + ([next(draws["ADJ"])] if with_adj else []) + [next(draws["NOUN"])]

        sentence = noun_phrase(adj1 < 0.4) + [next(draws["VERB"])] + noun_phrase(adj2 < 0.4)
        if prep < 0.5:
            sentence += [next(draws["PREP"])] + noun_phrase(adj3 < 0.4)
        ids += sentence + [0]
    return ToyCorpus(vocab, word_class, torch.tensor(ids))


class TinyLM(nn.Module):
    """Embedding -> one causal transformer block -> LayerNorm -> head; `tied` shares E with the head.

    Both matrices start from the same small normal distribution (N(0, init_std)), so the tied and the
    untied model start alike; nn.Embedding's default N(0, 1) would make a head's logits huge.
    """

    def __init__(self, vocab_size: int, d: int = 32, context: int = 16, tied: bool = True, init_std: float = 0.02):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d)
        self.pos = nn.Parameter(torch.zeros(context, d))
        self.block = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=4 * d, dropout=0.0,
                                                batch_first=True, norm_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab_size, bias=False)
        nn.init.normal_(self.embed.weight, std=init_std)
        nn.init.normal_(self.head.weight, std=init_std)
        if tied:
            self.head.weight = self.embed.weight
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # [B, T] -> logits [B, T, V]
        T = ids.shape[1]
        h = self.embed(ids) + self.pos[:T]
        h = self.block(h, src_mask=self.mask[:T, :T], is_causal=True)
        return self.head(self.norm(h))


@contextlib.contextmanager
def single_thread():
    """Run torch on one CPU thread (reproducible sums, and fast enough for tiny models)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def random_batch(ids: torch.Tensor, batch_size: int, context: int, generator: torch.Generator):
    """(inputs, targets), both [batch_size, context]: random windows and the same windows shifted by one."""
    starts = torch.randint(0, len(ids) - context - 1, (batch_size,), generator=generator)
    x = torch.stack([ids[s:s + context] for s in starts.tolist()])
    y = torch.stack([ids[s + 1:s + context + 1] for s in starts.tolist()])
    return x, y


def train_lm(model: torch.nn.Module, ids: torch.Tensor, *, steps: int, batch_size: int, context: int,
             lr: float, seed: int) -> list[float]:
    """Train `model` (ids [B, T] -> logits [B, T, V]) with AdamW on random windows; the loss of each step."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    losses = []
    model.train()
    with single_thread():
        for _ in range(steps):
            x, y = random_batch(ids, batch_size, context, g)
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


@torch.no_grad()
def token_losses(model: torch.nn.Module, ids: torch.Tensor, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of every next-token prediction over consecutive windows: (losses [N], input ids [N])."""
    n = (len(ids) - 1) // context * context
    x, y = ids[:n].view(-1, context), ids[1:n + 1].view(-1, context)
    model.eval()
    with single_thread():
        logits = model(x)
    return F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none"), x.flatten()


def smooth(values: list[float], window: int = 20) -> list[float]:
    """Running mean over the last `window` values (for readable loss curves)."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def two_decimals(x: float, signed: bool = False) -> str:
    """`x` with two decimals, never printed as a negative zero ("-0.00" becomes "0.00" or "+0.00")."""
    value = clean_round(x, 2)
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def cosine_band(cosine: float) -> str:
    """A wide band for a mean cosine, so a printed table reads the same on every CPU (in the course's language)."""
    if cosine > 0.6:
        return _("above 0.6")
    if cosine < 0.25:
        return _("below 0.25")
    return _("0.25 to 0.6")


def reference_facts() -> dict[str, dict]:
    """Per reference model (lesson_utils.reference_models), counted on the meta device, as published and flipped.

    Each entry: V, d, layers, tied, total (parameters as published), flipped (parameters with the tie the
    other way round), device (of the embedding; "meta"), and for Qwen3.5-0.8B `vision` (its vision encoder).
    Builds 2 models per entry; no weights, no memory.
    """
    from .reference_models import REFERENCE_CONFIGS, meta_model

    facts = {}
    for name in REFERENCE_CONFIGS:
        m = meta_model(name)
        flipped = meta_model(name, tied=not m.config.tie_word_embeddings)
        emb, head = m.get_input_embeddings().weight, m.get_output_embeddings().weight
        facts[name] = dict(V=emb.shape[0], d=emb.shape[1], layers=m.config.get_text_config().num_hidden_layers,
                           tied=head is emb, total=m.num_parameters(), flipped=flipped.num_parameters(),
                           device=emb.device.type)
        if ".visual." in "".join(f".{n}" for n, _ in m.named_parameters()):
            facts[name]["vision"] = sum(p.numel() for n, p in m.named_parameters() if ".visual." in f".{n}")
    return facts
