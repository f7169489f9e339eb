"""a freshly initialised head instead of a copy of the shared matrix."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'a freshly initialised head instead of a copy of the shared matrix'
EXPECT = 'a copy of the shared matrix'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    head.weight = nn.Parameter(torch.randn_like(emb.weight) * 0.02)
    model.config.tie_word_embeddings = False
