EXERCISE = "vocab_parallel_argmax"
MISTAKE = "adds the starts along the batch (last) axis: position j gets rank j's start, not the winning rank's"
EXPECT = "along the batch axis"
import torch


def vocab_parallel_argmax(local_values, local_indices, starts):
    best = local_values.argmax(dim=0, keepdim=True)
    winner_local = local_indices.gather(0, best)[0]
    return winner_local + starts[: winner_local.shape[-1]] if winner_local.dim() else winner_local + starts[0]
