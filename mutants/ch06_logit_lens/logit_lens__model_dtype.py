EXERCISE = 'logit_lens'
MISTAKE = "log_softmax in the model's dtype: a bfloat16 model gives a bfloat16 lens, not float32"
EXPECT = "returned the model's dtype, not float32"

import torch


@torch.no_grad()
def logit_lens(model, input_ids):
    base = model.base_model
    final_norm = base.norm if hasattr(base, "norm") else base.ln_f
    states = model(input_ids, output_hidden_states=True).hidden_states
    rows = [final_norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
    return model.get_output_embeddings()(torch.stack(rows)).log_softmax(dim=-1)
