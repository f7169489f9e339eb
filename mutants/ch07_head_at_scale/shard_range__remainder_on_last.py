"""V // w rows each, the whole remainder on the last rank."""
EXERCISE = 'shard_range'
MISTAKE = 'V // w rows each, the whole remainder on the last rank'
EXPECT = 'the last one the whole remainder'

def shard_range(vocab_size, world_size, rank):
    n = vocab_size // world_size
    return rank * n, (rank + 1) * n if rank < world_size - 1 else vocab_size
