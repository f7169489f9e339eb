"""the head gets a clone but the config still says tied, so from_pretrained ties them again."""
EXERCISE = 'untie_lm_head'
MISTAKE = 'the head gets a clone but the config still says tied, so from_pretrained ties them again'
EXPECT = 'ties the head to the embedding again'
from torch import nn


def untie_lm_head(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if head.weight.untyped_storage().data_ptr() == emb.weight.untyped_storage().data_ptr():
        head.weight = nn.Parameter(emb.weight.detach().clone())
