"""Every rank gets ceil(V / w) rows, the last ones what is left."""
EXERCISE = 'shard_range'
MISTAKE = 'every rank gets ceil(V / w) rows, the last ones what is left'
EXPECT = "Megatron's padded layout"

def shard_range(vocab_size, world_size, rank):
    n = -(-vocab_size // world_size)
    return min(rank * n, vocab_size), min((rank + 1) * n, vocab_size)
