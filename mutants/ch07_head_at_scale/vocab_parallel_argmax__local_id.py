"""Returns the winning rank's local index, not the global id."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = "returns the winning rank's local index, not the global id"
EXPECT = 'LOCAL index of the winning rank'

def vocab_parallel_argmax(local_values, local_indices, starts):
    best = local_values.argmax(0, keepdim=True)
    return local_indices.gather(0, best)[0]
