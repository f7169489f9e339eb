"""Chapter 07: references the checks share (rank ranges and slices, the course model's logits)."""
from __future__ import annotations

from functools import lru_cache

import torch

from ...model import Case
from ..build import case_with_reference, cases
from ..fixtures import course_model


PROMPT = "The capital of France is"
TRAIN_TEXT = "The cat sat on the mat because it was warm."


# ---------------------------------------------------------------- references shared by the checks


def ranges(vocab: int, world: int) -> list[tuple[int, int]]:
    """[start, end) of each rank: torch.tensor_split gives the first V % w parts one extra element."""
    parts = torch.arange(vocab).tensor_split(world)
    out, start = [], 0
    for p in parts:
        out.append((start, start + len(p)))
        start += len(p)
    return out


def split(x: torch.Tensor, world: int) -> tuple[list[torch.Tensor], list[int]]:
    """Rank slices of the last dim of x (contiguous copies, as each rank would hold them) and their starts."""
    rs = ranges(x.shape[-1], world)
    return [x[..., s:e].clone() for s, e in rs], [s for s, _ in rs]


@lru_cache(maxsize=1)
def course_logits(prompt: str = PROMPT) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(ids [T], final hidden states [T, d] after the final norm, logits [T, V]) of the course model."""
    model, tok = course_model()
    ids = tok(prompt, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model(ids, output_hidden_states=True)
    return ids[0], out.hidden_states[-1][0].float().clone(), out.logits[0].float().clone()


def _arg_shapes(calls) -> list[tuple[int, ...]]:
    """Every tensor-argument shape seen by the record_ops protocol."""
    return [tuple(shape) for _name, shapes in calls for shape in shapes]


# ---------------------------------------------------------------- the chapter


def _cases(inputs: dict, check, call: str = "call") -> list[Case]:
    """One case per entry; an entry is a builder (returning inputs and reference data) or plain inputs."""
    return [case_with_reference(name, build, check, call) if callable(build) else
            cases({name: build}, check, call, constant=True)[0] for name, build in inputs.items()]
