EXERCISE = 'logit_lens'
MISTAKE = 'used the input embedding as the head (wrong for untied models)'
EXPECT = 'input embedding as the head'

import torch


def _norm_and_head(model):
    base = model.base_model
    return (base.norm if hasattr(base, "norm") else base.ln_f), model.get_output_embeddings()


@torch.no_grad()
def logit_lens(model, input_ids):
    final_norm, head = _norm_and_head(model)
    states = model(input_ids, output_hidden_states=True).hidden_states

    rows = [final_norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
    E = model.get_input_embeddings().weight
    return (torch.stack(rows) @ E.T).log_softmax(dim=-1)
