EXERCISE = 'sample_next_token'
MISTAKE = 'did not pass the generator to torch.multinomial'
EXPECT = 'Pass the generator'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    return int(torch.multinomial(softmax(logits), 1))
