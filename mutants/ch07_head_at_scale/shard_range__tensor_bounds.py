"""Returns 0-d tensors from torch arithmetic instead of Python ints."""
EXERCISE = 'shard_range'
MISTAKE = 'returns 0-d tensors from torch arithmetic instead of Python ints'
EXPECT = 'return two Python ints'

import torch


def shard_range(vocab_size, world_size, rank):
    sizes = torch.full((world_size,), vocab_size // world_size)
    sizes[: vocab_size % world_size] += 1
    ends = sizes.cumsum(0)
    return ends[rank] - sizes[rank], ends[rank]
