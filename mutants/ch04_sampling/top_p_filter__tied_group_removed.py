EXERCISE = 'top_p_filter'
MISTAKE = ('value-based rule (keep a token if the mass of the tokens at least as likely as it, '
           'minus its own, is below p): a whole group of tied tokens at the cut is removed, so '
           'the kept mass can stay below p')
EXPECT = "tied at the cut"

import torch


def top_p_filter(logits, p):
    probs = softmax(logits)
    ascending = probs.sort(dim=-1).values
    cum_desc = ascending.flip(-1).cumsum(dim=-1)
    # how many tokens are at least as likely as each token (its ties included), and their mass
    n_at_least = probs.shape[-1] - torch.searchsorted(ascending.contiguous(), probs.contiguous())
    before = cum_desc.gather(-1, n_at_least - 1) - probs
    keep = (before < p) | (probs == probs.amax(dim=-1, keepdim=True))
    return logits.masked_fill(~keep, float("-inf"))
