"""Masks correctly but indexes the shard with the global id (no - start)."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = 'masks correctly but indexes the shard with the global id (no - start)'
EXPECT = 'indexed the shard with the global id'

import torch


def vocab_parallel_lookup(E_shard, ids, start):
    inside = ((ids >= start) & (ids < start + E_shard.shape[0])).unsqueeze(-1)
    return torch.where(inside, E_shard[ids.clamp(0, E_shard.shape[0] - 1)], 0)
