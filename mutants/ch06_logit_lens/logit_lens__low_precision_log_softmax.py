EXERCISE = 'logit_lens'
MISTAKE = "log_softmax in the model's bfloat16, cast to float32 only afterwards"
EXPECT = 'exactly a torch.bfloat16 number'

import torch


def logit_lens(model, input_ids):
    base = model.base_model
    final_norm = base.norm if hasattr(base, "norm") else base.ln_f
    with torch.no_grad():
        states = model(input_ids, output_hidden_states=True).hidden_states
        rows = [final_norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
        return model.get_output_embeddings()(torch.stack(rows)).log_softmax(dim=-1).float()
