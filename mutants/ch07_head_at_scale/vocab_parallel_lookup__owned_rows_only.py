"""Returns only the rows it owns (E_shard[local[mask]]), dropping the others."""
EXERCISE = 'vocab_parallel_lookup'
MISTAKE = 'returns only the rows it owns (E_shard[local[mask]]), dropping the others'
EXPECT = 'expected shape'

def vocab_parallel_lookup(E_shard, ids, start):
    local = ids - start
    return E_shard[local[(local >= 0) & (local < E_shard.shape[0])]]
