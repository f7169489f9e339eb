"""The extra rows go to the last V % w ranks."""
EXERCISE = 'shard_range'
MISTAKE = 'the extra rows go to the last V % w ranks'
EXPECT = 'went to the LAST ranks'

def shard_range(vocab_size, world_size, rank):
    base, extra = divmod(vocab_size, world_size)
    first_big = world_size - extra
    start = rank * base + max(0, rank - first_big)
    return start, start + base + (1 if rank >= first_big else 0)
