"""eigenvectors of a one-pass covariance X.T X / n - mean mean^T (cancels in float32)."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'eigenvectors of a one-pass covariance X.T X / n - mean mean^T (cancels in float32)'
EXPECT = 'catastrophic cancellation'

import torch


def remove_top_directions(X, k):
    mean = X.mean(dim=0)
    cov = X.T @ X / X.shape[0] - torch.outer(mean, mean)
    _, vecs = torch.linalg.eigh(cov)
    top = vecs.flip(-1)[:, :k].T
    centred = X - mean
    return centred - (centred @ top.T) @ top
