"""Adds the start of the next rank (an off-by-one in the rank)."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'adds the start of the next rank (an off-by-one in the rank)'
EXPECT = None

import torch


def vocab_parallel_argmax(local_values, local_indices, starts):
    best = local_values.argmax(0, keepdim=True)
    shifted = torch.cat([starts[1:], starts[-1:]])
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    return (local_indices + shifted.reshape(shape)).gather(0, best)[0]
