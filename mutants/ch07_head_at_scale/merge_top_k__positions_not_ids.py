"""Returns positions in the concatenated list instead of token ids."""
EXERCISE = 'merge_top_k'
MISTAKE = 'returns positions in the concatenated list instead of token ids'
EXPECT = None

def merge_top_k(local_values, local_indices, starts, k):
    values = local_values.movedim(0, -2).flatten(-2)
    top = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, top), top
