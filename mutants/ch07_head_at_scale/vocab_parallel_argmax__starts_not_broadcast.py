"""Adds starts without reshaping it to [world, 1, ...]: wrong for batch shapes."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'adds starts without reshaping it to [world, 1, ...]: wrong for batch shapes'
EXPECT = None

def vocab_parallel_argmax(local_values, local_indices, starts):
    ids = (local_indices.T + starts).T
    best = local_values.argmax(0, keepdim=True)
    return ids.gather(0, best)[0]
