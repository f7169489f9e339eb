"""Global ids computed in a float tensor (so that +inf can mask the losers): past 2**24 they come out rounded."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'global ids through float32'
EXPECT = 'through float32'

def vocab_parallel_argmax(local_values, local_indices, starts):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    global_ids = local_indices.float() + starts.reshape(shape).float()
    best = local_values.amax(dim=0, keepdim=True)
    return torch.where(local_values == best, global_ids, torch.full_like(global_ids, float('inf'))).amin(dim=0).long()
