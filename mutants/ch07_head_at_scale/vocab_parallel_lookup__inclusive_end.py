"""Treats id start + len(E_shard) as owned."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = 'treats id start + len(E_shard) as owned'
EXPECT = 'the end of the range is exclusive'

import torch


def vocab_parallel_lookup(E_shard, ids, start):
    inside = ((ids >= start) & (ids <= start + E_shard.shape[0])).unsqueeze(-1)
    return torch.where(inside, E_shard[(ids - start).clamp(0, E_shard.shape[0] - 1)], 0)
