EXERCISE = 'greedy_generate'
MISTAKE = 'predicted from the first position'
EXPECT = 'first position'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    ids = input_ids.clone()
    for _ in range(max_new_tokens):
        next_id = model(ids).logits[:, 0, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids
