"""Classes that cases' inputs are built from, importable in the sandbox (they hold no answers).

Inputs are pickled in the judge and unpickled in the grading worker, which never loads a chapter's
checks: a class an input is an instance of must live here (or in torch/transformers), not in
grading/chNN_*.py.
"""
from __future__ import annotations

from torch import nn


class TinyLM(nn.Module):
    """Embedding -> MLP block -> LayerNorm -> head, optionally tied (chapter 03's parameter counts)."""

    def __init__(self, V: int, d: int, tied: bool):
        super().__init__()
        self.embed = nn.Embedding(V, d)
        self.block = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, V, bias=False)
        if tied:
            self.head.weight = self.embed.weight
