EXERCISE = "greedy_generate"
MISTAKE = "starts from ids = input_ids with no copy: max_new_tokens = 0 returns the caller's tensor itself"
EXPECT = "you returned `input_ids` itself"

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):
    ids = input_ids
    for _ in range(max_new_tokens):
        ids = torch.cat([ids, model(ids).logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=-1)
    return ids
