"""Takes the first k entries of the concatenated lists."""
EXERCISE = 'merge_top_k'
MISTAKE = 'takes the first k entries of the concatenated lists'
EXPECT = 'without sorting them by value'

def merge_top_k(local_values, local_indices, starts, k):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    values = local_values.movedim(0, -2).flatten(-2)
    ids = (local_indices + starts.reshape(shape)).movedim(0, -2).flatten(-2)
    return values[..., :k], ids[..., :k]
