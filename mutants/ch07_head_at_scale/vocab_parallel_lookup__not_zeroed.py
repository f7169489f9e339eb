"""Clamps the ids into the shard and looks up, never zeroing the borrowed rows."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = 'clamps the ids into the shard and looks up, never zeroing the borrowed rows'
EXPECT = 'forgot to zero the masked rows'

def vocab_parallel_lookup(E_shard, ids, start):
    return E_shard[(ids - start).clamp(0, E_shard.shape[0] - 1)]
