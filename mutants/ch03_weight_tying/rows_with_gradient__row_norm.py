EXERCISE = "rows_with_gradient"
MISTAKE = "counts rows whose float norm is > 0: the norm squares the entries, and tiny ones (2e-30 in float32, 1e-300 in float64) underflow to 0"
EXPECT = 'underflow'
import torch


def rows_with_gradient(grad):
    return int((torch.linalg.vector_norm(grad, dim=1) > 0).sum())
