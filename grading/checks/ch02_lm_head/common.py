"""Chapter 02: the real model's numbers the checks share."""
from __future__ import annotations

from functools import lru_cache

import torch

from ..fixtures import CAT_PROMPT, course_ids, course_model


# ---------------------------------------------------------------- the real model's numbers


@lru_cache(maxsize=1)
def _cat_forward() -> tuple[torch.Tensor, torch.Tensor]:
    """(final-normed hidden states [T, d], the model's own logits [T, V]) for the cat prompt."""
    model, _ = course_model()
    with torch.no_grad():
        out = model(course_ids(CAT_PROMPT)[None], output_hidden_states=True)
    return out.hidden_states[-1][0], out.logits[0]


def _head_weight() -> torch.Tensor:
    return course_model()[0].lm_head.weight.detach()


# ---------------------------------------------------------------- the chapter
