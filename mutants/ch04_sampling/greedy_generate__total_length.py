EXERCISE = 'greedy_generate'
MISTAKE = 'treated max_new_tokens as the total length (prompt included)'
EXPECT = 'NEW tokens'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    ids = input_ids.clone()
    while ids.shape[1] < max_new_tokens:
        next_id = model(ids).logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids
