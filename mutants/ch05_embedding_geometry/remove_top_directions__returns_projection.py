"""returned the reconstruction from the top directions instead of the residual."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'returned the reconstruction from the top directions instead of the residual'
EXPECT = 'projection on the top directions'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    top = torch.linalg.svd(centred, full_matrices=False)[2][:k]
    return (centred @ top.T) @ top
