EXERCISE = 'top_p_filter'
MISTAKE = 'works on a float32 copy "for speed" and returns it: float64 logits come back as float32'
EXPECT = 'your result is float32 when the input is float64'

import torch


def top_p_filter(logits, p):
    x = logits.float()
    probs, order = softmax(x).sort(dim=-1, descending=True)
    before = probs.cumsum(dim=-1) - probs  # the mass of the tokens more likely than each one
    keep = before < p
    keep[..., 0] = True
    return x.masked_fill(~keep.scatter(-1, order, keep), float("-inf"))
