"""Replaces the ids it does not own by 0 and looks them up, without zeroing."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = 'replaces the ids it does not own by 0 and looks them up, without zeroing'
EXPECT = 'did not zero those rows'

import torch


def vocab_parallel_lookup(E_shard, ids, start):
    local = ids - start
    inside = (local >= 0) & (local < E_shard.shape[0])
    return E_shard[torch.where(inside, local, 0)]
