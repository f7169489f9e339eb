EXERCISE = 'sample_next_token'
MISTAKE = "drew from the kept tokens' probabilities only"
EXPECT = 'kept tokens only'

import torch


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):

    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    kept = torch.isfinite(logits).nonzero().flatten()
    return int(kept[torch.multinomial(softmax(logits[kept]), 1, generator=generator)])
