"""unties a deep copy of the model and returns it, leaving the given model tied."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'unties a deep copy of the model and returns it, leaving the given model tied'
EXPECT = 'does not copy anything'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    model = copy.deepcopy(model)
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    head.weight = nn.Parameter(emb.weight.detach().clone())
    model.config.tie_word_embeddings = False
    return model
