EXERCISE = 'sample_next_token'
MISTAKE = 'temperature 0 returns the argmax but still takes a draw from the generator'
EXPECT = 'must not draw'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        probs = torch.zeros_like(logits)
        probs[logits.argmax()] = 1.0
        return int(torch.multinomial(probs, 1, generator=generator))
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    return int(torch.multinomial(softmax(logits), 1, generator=generator))
