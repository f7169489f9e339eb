EXERCISE = 'greedy_generate'
MISTAKE = 'argmax over the flattened [B, V] logits (no dim)'
EXPECT = None

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    ids = input_ids.clone()
    for _ in range(max_new_tokens):
        next_id = model(ids).logits[:, -1, :].argmax().reshape(1, 1)
        ids = torch.cat([ids, next_id.expand(ids.shape[0], 1)], dim=-1)
    return ids
