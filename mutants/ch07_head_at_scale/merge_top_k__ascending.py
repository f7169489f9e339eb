"""Sorted smallest first."""
EXERCISE = 'merge_top_k'
MISTAKE = 'sorted smallest first'
EXPECT = 'ascending order'

def merge_top_k(local_values, local_indices, starts, k):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    values = local_values.movedim(0, -2).flatten(-2)
    ids = (local_indices + starts.reshape(shape)).movedim(0, -2).flatten(-2)
    order = ids.argsort(dim=-1, stable=True)
    values, ids = values.gather(-1, order), ids.gather(-1, order)
    top = values.argsort(dim=-1, descending=True, stable=True)[..., :k].flip(-1)
    return values.gather(-1, top), ids.gather(-1, top)
