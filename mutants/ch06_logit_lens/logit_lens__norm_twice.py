EXERCISE = 'logit_lens'
MISTAKE = 'final norm applied to every state, the last one included (normalised twice)'
EXPECT = 'final norm applied twice'

import torch


def _norm_and_head(model):
    base = model.base_model
    return (base.norm if hasattr(base, "norm") else base.ln_f), model.get_output_embeddings()


@torch.no_grad()
def logit_lens(model, input_ids):
    final_norm, head = _norm_and_head(model)
    states = model(input_ids, output_hidden_states=True).hidden_states

    rows = [final_norm(h[0, -1]) for h in states]
    return head(torch.stack(rows)).log_softmax(dim=-1)
