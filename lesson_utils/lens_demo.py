"""Helpers for chapter 06's demonstrations (none of them is a graded exercise).

FIT_TEXT: a fixed piece of course prose (the opening of chapters 01-04 as they read when chapter 06's fitted lens
was measured). It is frozen here, not read from the notebooks, so that the fit, and every number printed from it,
stays the same when those chapters are edited.
"""
from __future__ import annotations

import torch

from .portable import gap_to_nearest

FIT_TEXT = '# 01 · Embedding lookup: from token ids to vectors\n\nThe first thing a language model does with your text is swap every token id for a vector. Chapter 00 showed this\nas one arrow, **token ids → embedding rows [T, d]**. This chapter opens that arrow: what the table is, how a row\nis found in memory, what it costs, and how the table learns.\n\n**What you will learn**\n- the embedding matrix `E` has shape [V, d], and a lookup takes row `i` for token id `i`;\n- the lookup equals `one_hot(ids) @ E`, so an embedding is a linear layer without bias, and why nobody computes\n  it that way;\n- where row `i` lives in memory (`i * d * bytes` after the start), checked with real addresses;\n- what a gather costs against a one-hot product, counted and measured;\n- how a table starts (random, with a chosen spread) and why a random table means nothing;\n- the backward pass: the gradient is scattered back into the rows that were used, and summed for repeated ids;\n- why that makes gradients sparse, why an optimiser such as Adam still moves other rows, and what "rare tokens\n  learn slowly" really means at realistic batch sizes;\n- the same table read the other way round: the unembedding `W_U` of a tied model.\n\n**Prerequisites**: chapter 00; indexing a tensor with a tensor of indices; a matrix product; what `.backward()`\ncomputes.\n\n**Self-test** (answer before you read on):\n1. `A = torch.tensor([[1, 2], [3, 4], [5, 6]])`. What is `A[torch.tensor([2, 0])]`?\n2. What is `torch.tensor([0, 1, 0]) @ A`?\n3. How many multiplications does a product of a [1, n] vector with an [n, m] matrix take?\n4. If `y = f(x) + f(x)` uses `x` twice, how does `x`\'s gradient combine the two uses?\n\n<details><summary>Answers</summary>\n\n1. Rows 2 and 0: `[[5, 6], [1, 2]]`. Indexing with a tensor of ids returns one row per id.\n2. Row 1: `[3, 4]`. A one-hot vector picks a row.\n3. n × m (and about as many additions).\n4. The two contributions are added.\n</details>\n\nYour own answers live in `exercises/ch01_embeddings.py` (open it from JupyterLab\'s file browser). The next cell\nimports that file as `mine`, so you can try your functions on the real model as you go, for example\n`mine.lookup(E, ids)` once `E` and `ids` exist below; with autoreload, every save of the file is picked up\nwithout restarting the kernel.\n\n## 1. E is a table of rows\n\nThe embedding matrix `E` has one row per token of the vocabulary and one column per dimension of the model:\nshape [V, d]. Row `i` is the vector of token `i`. Here is the course model\'s table.\n\nTokenise a prompt and take the rows of its ids. The model\'s embedding layer (an `'


def first_layer_from(mask) -> int:
    """The first layer from which `mask` (one bool per layer) stays true up to the last layer; len(mask) if never."""
    layer = len(mask)
    while layer > 0 and bool(mask[layer - 1]):
        layer -= 1
    return layer


def assert_ranks_portable(scores: torch.Tensor, index: int, min_gap: float = 1e-4) -> None:
    """Fail unless, in every row of `scores` ([layers, V] or [V]), no other entry is within `min_gap` of `index`'s.

    A printed rank can only change between CPUs (native kernels against portable ones) when another token's score
    sits within rounding distance of the target's; the lens's scores were measured to move by less than 5e-5.
    """
    rows = scores[None] if scores.dim() == 1 else scores
    worst = min(gap_to_nearest(row, index) for row in rows)
    if worst <= min_gap:
        raise AssertionError(f"a rank could flip between CPUs: a token's score is {worst:.1e} from token {index}'s "
                             f"(needs more than {min_gap:.0e})")


def rank_band(rank: int, vocab_size: int) -> str:
    """A rank as a band ("1st", "top 5", "top 30", "top 100", "top V"): the fitted lens's exact ranks below the top
    move with the last bits of the fit, its bands do not. In English: a cell prints it inside its own line or table
    cell, which a Chinese notebook translates whole (lesson_utils/output_text.py)."""
    return "1st" if rank == 0 else next(f"top {b}" for b in (5, 30, 100, vocab_size) if rank < b)
