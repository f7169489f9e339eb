EXERCISE = "vocab_parallel_lookup"
MISTAKE = "looks the rows up in a float32 copy of the shard and casts back: invisible for float32/16 tables, float64 loses digits"
EXPECT = 'only to float32 precision'
import torch
import torch.nn.functional as F


def vocab_parallel_lookup(E_shard, ids, start):
    local = ids - start
    outside = (local < 0) | (local >= E_shard.shape[0])
    if E_shard.shape[0] == 0:
        return E_shard.new_zeros(*ids.shape, E_shard.shape[1])
    rows = F.embedding(local.masked_fill(outside, 0), E_shard.float())
    return rows.masked_fill(outside.unsqueeze(-1), 0).to(E_shard.dtype)
