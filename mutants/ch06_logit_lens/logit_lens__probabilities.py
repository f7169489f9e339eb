EXERCISE = 'logit_lens'
MISTAKE = 'returned probabilities instead of log-probabilities'
EXPECT = 'probabilities'

import torch


def _norm_and_head(model):
    base = model.base_model
    return (base.norm if hasattr(base, "norm") else base.ln_f), model.get_output_embeddings()


@torch.no_grad()
def logit_lens(model, input_ids):
    final_norm, head = _norm_and_head(model)
    states = model(input_ids, output_hidden_states=True).hidden_states

    rows = [final_norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
    return head(torch.stack(rows)).softmax(dim=-1)
