"""eigh of the covariance, last k eigenvectors by a negative slice: for k = 0, [:, -0:] keeps every column."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'the top k taken as vecs[:, -k:]: for k = 0 the slice is [:, 0:] and every direction is removed'
EXPECT = 'with k = 0 you removed every direction'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    _, vecs = torch.linalg.eigh(centred.T @ centred)
    top = vecs[:, -k:].T
    return centred - (centred @ top.T) @ top
