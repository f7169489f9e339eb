EXERCISE = 'greedy_generate'
MISTAKE = 'returned only the new tokens'
EXPECT = 'only the new tokens'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    ids = input_ids
    for _ in range(max_new_tokens):
        next_id = model(ids).logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids[:, input_ids.shape[1]:]
