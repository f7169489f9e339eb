"""the centred data is used for the SVD but the projections are removed from the uncentred X."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'the centred data is used for the SVD but the projections are removed from the uncentred X'
EXPECT = 'added the mean back'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    top = torch.linalg.svd(centred, full_matrices=False)[2][:k]
    return X - (centred @ top.T) @ top
