"""Merges correctly but forgets to add each rank's start."""
EXERCISE = 'merge_top_k'
MISTAKE = "merges correctly but forgets to add each rank's start"
EXPECT = 'you returned LOCAL indices'

def merge_top_k(local_values, local_indices, starts, k):
    values = local_values.movedim(0, -2).flatten(-2)
    ids = local_indices.movedim(0, -2).flatten(-2)
    order = ids.argsort(dim=-1, stable=True)
    values, ids = values.gather(-1, order), ids.gather(-1, order)
    top = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, top), ids.gather(-1, top)
