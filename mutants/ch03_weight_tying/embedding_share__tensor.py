EXERCISE = "embedding_share"
MISTAKE = "returns a 0-d float64 tensor, not a Python float"
EXPECT = 'a Python float'
import torch


def embedding_share(vocab_size, d_model, total_params):
    return torch.tensor(vocab_size * d_model, dtype=torch.float64) / total_params
