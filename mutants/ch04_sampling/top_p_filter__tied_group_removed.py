EXERCISE = 'top_p_filter'
MISTAKE = ('value-based rule (mass of tokens at least as likely): a whole group of tied tokens '
           'at the cut is removed, so the kept mass can stay below p')
EXPECT = 'tied'

import torch


def top_p_filter(logits, p):
    probs = softmax(logits)
    # mass of the tokens at least as likely as each token (its ties included), minus its own probability
    at_least = (probs[..., None, :] >= probs[..., :, None]).to(probs.dtype)
    before = (at_least * probs[..., None, :]).sum(-1) - probs
    keep = before < p
    keep |= probs == probs.amax(-1, keepdim=True)
    return logits.masked_fill(~keep, float("-inf"))
