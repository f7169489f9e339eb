"""centred rows minus the projections of the uncentred rows."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'centred rows minus the projections of the uncentred rows'
EXPECT = 'UNCENTRED rows'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    top = torch.linalg.svd(centred, full_matrices=False)[2][:k]
    return centred - (X @ top.T) @ top
