"""Adds starts[:, None], which broadcasts only for [world, B] inputs, not for other batch shapes."""
EXERCISE = 'vocab_parallel_argmax'
MISTAKE = 'adds starts[:, None] (written for [world, B]): other batch shapes break'
EXPECT = None


def vocab_parallel_argmax(local_values, local_indices, starts):
    ids = local_indices + starts[:, None]
    best = local_values.argmax(0, keepdim=True)
    return ids.gather(0, best)[0]
