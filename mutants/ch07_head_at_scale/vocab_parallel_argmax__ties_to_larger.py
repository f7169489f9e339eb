"""Among equal maxima takes the last rank, the larger id."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'among equal maxima takes the last rank, the larger id'
EXPECT = 'ties across ranks went to the larger id'

def vocab_parallel_argmax(local_values, local_indices, starts):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    ids = local_indices + starts.reshape(shape)
    world = local_values.shape[0]
    is_max = local_values == local_values.amax(0, keepdim=True)
    last = (world - 1) - is_max.flip(0).long().argmax(0, keepdim=True)
    return ids.gather(0, last)[0]
