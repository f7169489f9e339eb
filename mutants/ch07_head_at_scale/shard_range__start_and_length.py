"""Returns (start, number of rows)."""
EXERCISE = 'shard_range'
MISTAKE = 'returns (start, number of rows)'
EXPECT = '(start, number of rows)'

def shard_range(vocab_size, world_size, rank):
    base, extra = divmod(vocab_size, world_size)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)
