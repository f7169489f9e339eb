EXERCISE = 'untie_lm_head'
MISTAKE = 'tested the tie by identity (is): a head on the embedding storage under another Parameter object stays tied'
EXPECT = 'still share one storage'

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if head.weight is emb.weight:
        head.weight = nn.Parameter(emb.weight.detach().clone())
    model.config.tie_word_embeddings = False
