"""Chapter 05 (embedding geometry): what part 1 builds, in one call each, so part 2 can start from it."""
from __future__ import annotations

import torch
import torch.nn.functional as F

WORD_GROUPS = {
    "numbers": " one two three four five six seven eight nine ten",
    "days": " Monday Tuesday Wednesday Thursday Friday Saturday Sunday",
    "colours": " red blue green yellow black white purple orange pink brown",
    "animals": " cat dog horse cow pig sheep lion tiger rabbit mouse",
    "countries": " France Germany Italy Spain Japan China Russia Canada India Egypt",
    "capitals": " Paris Berlin Rome Madrid Tokyo Beijing Moscow Ottawa Delhi Cairo",
}


def usable_rows(E: torch.Tensor, special_ids: list[int], threshold: float = 0.95) -> torch.Tensor:
    """[V] bool mask: False for the special tokens and for rows whose cosine with the most-shared row of E
    (the row the largest group of identical rows has) exceeds `threshold`, the under-trained cluster."""
    if E.ndim != 2:
        raise ValueError(f"E must be a [V, d] table, got shape {list(E.shape)}")
    _, inverse, counts = torch.unique(E, dim=0, return_inverse=True, return_counts=True)
    shared = int((inverse == int(counts.argmax())).nonzero()[0])
    usable = F.cosine_similarity(E, E[shared][None], dim=1) <= threshold
    usable[list(special_ids)] = False
    return usable


def grouped_words(groups: dict[str, str] = WORD_GROUPS) -> tuple[list[str], list[str]]:
    """The words (each with a leading space, as one token) and, for each, its group name."""
    words = [" " + w for text in groups.values() for w in text.split()]
    return words, [g for g, text in groups.items() for _ in text.split()]
