"""Returns the rank that holds the maximum."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'returns the rank that holds the maximum'
EXPECT = 'you returned the winning RANK'

def vocab_parallel_argmax(local_values, local_indices, starts):
    return local_values.argmax(0)
