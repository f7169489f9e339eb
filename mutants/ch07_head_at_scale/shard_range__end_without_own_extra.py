EXERCISE = "shard_range"
MISTAKE = "the end forgets the rank's OWN extra row: end = (rank + 1) * (V // world) + min(rank, V % world)"
EXPECT = "own extra row"


def shard_range(vocab_size, world_size, rank):
    base, extra = divmod(vocab_size, world_size)
    start = rank * base + min(rank, extra)
    return start, (rank + 1) * base + min(rank, extra)
