"""eigh of the covariance, first k eigenvectors: the k SMALLEST directions."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'eigh of the covariance, first k eigenvectors: the k SMALLEST directions'
EXPECT = 'SMALLEST variance'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    _, vecs = torch.linalg.eigh(centred.T @ centred)
    top = vecs[:, :k].T
    return centred - (centred @ top.T) @ top
