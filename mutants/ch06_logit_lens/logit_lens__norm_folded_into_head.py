EXERCISE = "logit_lens"
MISTAKE = "folds the final norm's gain into the (tied) head weight in place and divides it back out afterwards: the values look right, but the model's weights are left changed by rounding"
EXPECT = "a write into a model's weights"
import torch


def logit_lens(model, input_ids):
    base = model.base_model
    final_norm = base.norm if hasattr(base, "norm") else base.ln_f
    head = model.get_output_embeddings()
    with torch.no_grad():
        states = model(input_ids, output_hidden_states=True).hidden_states
        gain = final_norm.weight
        head.weight.mul_(gain)  # fold the gain into the head: every layer then needs only x / rms(x)
        rows = []
        for h in states[:-1]:
            x = h[0, -1]
            rows.append(x * torch.rsqrt(x.pow(2).mean() + final_norm.variance_epsilon))
        logits = torch.stack(rows) @ head.weight.T
        head.weight.div_(gain)  # "undo" the fold; rounding leaves the weights slightly changed
        last = head(states[-1][0, -1])
        return torch.cat([logits, last[None]]).log_softmax(dim=-1)
