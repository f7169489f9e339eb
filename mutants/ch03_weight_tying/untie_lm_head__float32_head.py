EXERCISE = 'untie_lm_head'
MISTAKE = 'a new nn.Linear head (float32 by default) for a bfloat16 model'
EXPECT = 'only the dtype differs'

import torch
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if head.weight.untyped_storage().data_ptr() == emb.weight.untyped_storage().data_ptr():
        V, d = emb.weight.shape
        new = nn.Linear(d, V, bias=False)  # float32, whatever the model's dtype
        with torch.no_grad():
            new.weight.copy_(emb.weight)
        model.set_output_embeddings(new)
    model.config.tie_word_embeddings = False
