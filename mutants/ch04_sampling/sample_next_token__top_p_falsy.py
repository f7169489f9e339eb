EXERCISE = 'sample_next_token'
MISTAKE = '`if top_p:` treats top_p = 0.0 as no top-p'
EXPECT = 'top_p = 0'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_k:
        logits = top_k_filter(logits, top_k)
    if top_p:
        logits = top_p_filter(logits, top_p)
    return int(torch.multinomial(softmax(logits), 1, generator=generator))
