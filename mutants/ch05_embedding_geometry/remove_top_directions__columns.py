"""the first k columns of Vh used as the directions."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'the first k columns of Vh used as the directions'
EXPECT = 'as columns'

import torch


def remove_top_directions(X, k):
    centred = X - X.mean(dim=0)
    Vh = torch.linalg.svd(centred, full_matrices=True)[2]
    top = Vh[:, :k].T
    return centred - (centred @ top.T) @ top
