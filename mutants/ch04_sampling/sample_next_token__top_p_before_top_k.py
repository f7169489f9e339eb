EXERCISE = 'sample_next_token'
MISTAKE = 'applied top-p before top-k'
EXPECT = 'top-p before top-k'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    return int(torch.multinomial(softmax(logits), 1, generator=generator))
