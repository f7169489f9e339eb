EXERCISE = 'lookup'
MISTAKE = 'the ids went through float32 (exact only up to 2**24), so ids above 2**24 land on a neighbouring row'
EXPECT = 'went through float32'

import torch


def lookup(E, ids):
    rows = ids.to(torch.float32)  # "an index is a number": exact only up to 2**24
    return E[rows.long()]
