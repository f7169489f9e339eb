EXERCISE = "vocab_parallel_argmax"
MISTAKE = "ranks whose maxima are merely close (torch.isclose) count as tied, so a smaller id with a slightly smaller logit wins"
EXPECT = 'only exactly equal values tie'
import torch


def vocab_parallel_argmax(local_values, local_indices, starts):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    global_ids = local_indices + starts.reshape(shape)
    best = local_values.amax(dim=0, keepdim=True)
    tied = torch.isclose(local_values, best) | (local_values == best)
    big = torch.iinfo(torch.long).max
    return torch.where(tied, global_ids, torch.full_like(global_ids, big)).amin(dim=0)
