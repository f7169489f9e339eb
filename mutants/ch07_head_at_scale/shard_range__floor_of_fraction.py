EXERCISE = "shard_range"
MISTAKE = "boundaries at floor(rank * V / world): an even-looking split whose longer shards are not the first ones"
EXPECT = "floor(rank * V / world)"


def shard_range(vocab_size, world_size, rank):
    return rank * vocab_size // world_size, (rank + 1) * vocab_size // world_size
