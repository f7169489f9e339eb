"""nn.Parameter(emb.weight): a new Parameter object over the same storage."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'nn.Parameter(emb.weight): a new Parameter object over the same storage'
EXPECT = 'still share one storage'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    head.weight = nn.Parameter(emb.weight)
    model.config.tie_word_embeddings = False
