EXERCISE = 'greedy_generate'
MISTAKE = 'only the last token fed to the model at each step, as if a KV cache were kept'
EXPECT = 'only the last token at each step'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):
    ids = input_ids.clone()
    for _ in range(max_new_tokens):
        next_id = model(ids[:, -1:]).logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=-1)
    return ids
