"""The notebook's worker copied: mask[:, None] works for 1-D ids only, and an empty shard breaks it."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = "the notebook's worker copied: mask[:, None] works for 1-D ids only, and an empty shard breaks it"
EXPECT = None

import torch


def vocab_parallel_lookup(E_shard, ids, start):
    outside = (ids < start) | (ids >= start + E_shard.shape[0])
    rows = E_shard[torch.where(outside, 0, ids - start)]
    return torch.where(outside[:, None], 0.0, rows)
