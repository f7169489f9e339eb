EXERCISE = 'logit_lens'
MISTAKE = "a hand-written final norm with eps = 1e-5 hard-coded instead of the norm's own epsilon"
EXPECT = 'epsilon'

import torch


def _norm_and_head(model):
    base = model.base_model
    return (base.norm if hasattr(base, "norm") else base.ln_f), model.get_output_embeddings()


@torch.no_grad()
def logit_lens(model, input_ids):
    final_norm, head = _norm_and_head(model)
    states = model(input_ids, output_hidden_states=True).hidden_states

    def norm(x):
        if hasattr(final_norm, "bias") and final_norm.bias is not None:  # LayerNorm
            return torch.nn.functional.layer_norm(x, x.shape[-1:], final_norm.weight, final_norm.bias, 1e-5)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * final_norm.weight

    rows = [norm(h[0, -1]) for h in states[:-1]] + [states[-1][0, -1]]
    return head(torch.stack(rows)).log_softmax(dim=-1)
