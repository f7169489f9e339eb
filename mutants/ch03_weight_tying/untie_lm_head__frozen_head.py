"""the copied head is created with requires_grad=False."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'the copied head is created with requires_grad=False'
EXPECT = 'not a trainable nn.Parameter'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    head.weight = nn.Parameter(emb.weight.detach().clone(), requires_grad=False)
    model.config.tie_word_embeddings = False
