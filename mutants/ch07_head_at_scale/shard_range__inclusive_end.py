"""Returns [start, end] with an inclusive end."""
EXERCISE = 'shard_range'
MISTAKE = 'returns [start, end] with an inclusive end'
EXPECT = 'your end is inclusive'

def shard_range(vocab_size, world_size, rank):
    base, extra = divmod(vocab_size, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (rank < extra) - 1
