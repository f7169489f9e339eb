EXERCISE = 'greedy_generate'
MISTAKE = 'stopped when every sequence produced the end-of-sequence token'
EXPECT = 'end-of-sequence'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos]) if eos is not None else set()
    ids = input_ids.clone()
    for _ in range(max_new_tokens):
        next_id = model(ids).logits[:, -1, :].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, next_id], dim=-1)
        if all(int(t) in eos for t in next_id[:, 0]):
            break
    return ids
