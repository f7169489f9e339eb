"""Adds the starts, then takes the largest id instead of the largest value."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'adds the starts, then takes the largest id instead of the largest value'
EXPECT = 'picked the largest id'

def vocab_parallel_argmax(local_values, local_indices, starts):
    shape = (-1,) + (1,) * (local_values.dim() - 1)
    return (local_indices + starts.reshape(shape)).amax(0)
