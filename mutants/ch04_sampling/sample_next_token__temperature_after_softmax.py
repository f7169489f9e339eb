EXERCISE = 'sample_next_token'
MISTAKE = 'divided the probabilities by T after softmax (no effect once renormalised)'
EXPECT = 'temperature had no effect'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        return int(logits.argmax())
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = softmax(logits) / temperature
    return int(torch.multinomial(probs / probs.sum(), 1, generator=generator))
