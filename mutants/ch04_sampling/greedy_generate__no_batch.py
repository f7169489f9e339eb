EXERCISE = 'greedy_generate'
MISTAKE = 'worked on the first sequence only and returned 1-D ids'
EXPECT = 'batch dimension'

import torch


@torch.no_grad()
def greedy_generate(model, input_ids, max_new_tokens):

    ids = input_ids[0]
    for _ in range(max_new_tokens):
        next_id = model(ids[None]).logits[0, -1, :].argmax()
        ids = torch.cat([ids, next_id[None]])
    return ids
