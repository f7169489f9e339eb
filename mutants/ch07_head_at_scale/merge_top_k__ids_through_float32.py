"""The ids merged in a float tensor, sorted with the values: past 2**24 they come out rounded."""
EXERCISE = 'merge_top_k'
MISTAKE = 'global ids through float32'
EXPECT = 'through float32'

def merge_top_k(local_values, local_indices, starts, k):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    ids = (local_indices + starts.reshape(shape)).float()
    values = torch.movedim(local_values, 0, -2).flatten(-2)
    ids = torch.movedim(ids, 0, -2).flatten(-2)
    by_id = ids.argsort(dim=-1, stable=True)
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    order = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, order), ids.gather(-1, order).long()
