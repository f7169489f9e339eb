"""only config.tie_word_embeddings = False: the head still is the embedding tensor."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'only config.tie_word_embeddings = False: the head still is the embedding tensor'
EXPECT = 'does not copy anything'

import copy

import torch
from torch import nn


def untie_lm_head(model):
    model.config.tie_word_embeddings = False
