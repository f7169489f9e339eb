EXERCISE = "untie_lm_head"
MISTAKE = "replaces the head by a fresh nn.Linear(d, V) (bias=True by default) holding a copy of the weight and a zero bias: a parameter the model never had"
EXPECT = 'did not have'
import torch
from torch import nn


def untie_lm_head(model):
    emb = model.get_input_embeddings()
    V, d = emb.weight.shape
    head = nn.Linear(d, V, dtype=emb.weight.dtype)
    with torch.no_grad():
        head.weight.copy_(model.get_output_embeddings().weight)
        head.bias.zero_()
    model.set_output_embeddings(head)
    model.config.tie_word_embeddings = False
