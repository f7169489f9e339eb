EXERCISE = "vocab_parallel_argmax"
MISTAKE = "compares the ranks' maxima after rounding them to bfloat16 (to save bandwidth), so close maxima tie and the smaller id wins"
EXPECT = 'rounded the maxima'
import torch


def vocab_parallel_argmax(local_values, local_indices, starts):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    global_ids = local_indices + starts.reshape(shape)
    v = local_values.to(torch.bfloat16)  # what is sent to the other ranks
    best = v.amax(dim=0, keepdim=True)
    big = torch.iinfo(torch.long).max
    return torch.where(v == best, global_ids, torch.full_like(global_ids, big)).amin(dim=0)
