EXERCISE = "merge_top_k"
MISTAKE = "drops the entries of a rank whose slice is all -inf (replaced by a finite sentinel -1e30), so -inf results come back finite"
EXPECT = 'expected -inf'
import torch


def merge_top_k(local_values, local_indices, starts, k):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    ids = local_indices + starts.reshape(shape)
    values = torch.movedim(local_values.clamp(min=-1e30), 0, -2).flatten(-2)
    ids = torch.movedim(ids, 0, -2).flatten(-2)
    by_id = ids.argsort(dim=-1, stable=True)
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    order = values.argsort(dim=-1, descending=True, stable=True)[..., :k]
    return values.gather(-1, order), ids.gather(-1, order)
