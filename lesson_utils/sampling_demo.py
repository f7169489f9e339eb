"""Small helpers for chapter 04's demonstrations (none of them is one of the chapter's exercises).

The filters themselves are never written here: the notebook uses transformers' own logits warpers
(`warped` only runs them on one row), and the learner writes the filters in exercises/ch04_sampling.py.
"""
from __future__ import annotations

from typing import Sequence

import torch


def warped(processors: Sequence, logits: torch.Tensor, input_ids: torch.Tensor | None = None) -> torch.Tensor:
    """Run transformers logits processors/warpers, in the order given, on one row of logits [V].

    They expect a batch [B, V] (and the ids so far, [B, T], for the processors that look at the context,
    such as the repetition penalty); this adds and removes the batch dimension.
    """
    from transformers import LogitsProcessorList

    ids = None if input_ids is None else input_ids.reshape(1, -1)
    return LogitsProcessorList(list(processors))(ids, logits.reshape(1, -1).clone())[0]


def sequence_logprobs(model, sequence: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """log p of every generated token of `sequence` [1, T] (float64), from one teacher-forced forward pass.

    Entry i is log p(token prompt_len + i | all tokens before it); their sum is the sequence log-probability.
    """
    with torch.no_grad():
        logp = torch.log_softmax(model(sequence).logits[0].double(), dim=-1)
    new = sequence[0, prompt_len:]
    return logp[prompt_len - 1:-1].gather(-1, new[:, None])[:, 0]


def most_repeated_phrase(seq: Sequence[int], min_count: int = 3) -> tuple[list[int], int]:
    """The longest token n-gram that occurs at least `min_count` times without overlapping, and its count.

    ([], 0) when no phrase repeats that often.
    """
    seq = list(seq)
    for n in range(len(seq) // min_count, 0, -1):
        best: tuple[list[int], int] = ([], 0)
        for i in range(len(seq) - n + 1):
            gram, count, j = seq[i:i + n], 0, 0
            while j <= len(seq) - n:
                if seq[j:j + n] == gram:
                    count, j = count + 1, j + n
                else:
                    j += 1
            if count > best[1]:
                best = (gram, count)
        if best[1] >= min_count:
            return best
    return [], 0


def distinct_ngrams(seq: Sequence[int], n: int = 2) -> float:
    """Share of the token n-grams of `seq` that are distinct (1.0: no n-gram repeats; low: a loop)."""
    grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0
