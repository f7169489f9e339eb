EXERCISE = "shard_range"
MISTAKE = "`rank <= V % world` instead of `<` for the ranks that get an extra row: rank V % world gets one row too many"
EXPECT = "rank < V % world"


def shard_range(vocab_size, world_size, rank):
    base, extra = divmod(vocab_size, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank <= extra else 0)
