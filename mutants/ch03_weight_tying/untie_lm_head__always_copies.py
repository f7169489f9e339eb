"""the embedding copied into the head even when the model was already untied."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'the embedding copied into the head even when the model was already untied'
EXPECT = 'already untied'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    head.weight = nn.Parameter(emb.weight.detach().clone())
    model.config.tie_word_embeddings = False
