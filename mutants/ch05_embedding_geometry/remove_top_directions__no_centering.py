"""no centring: the SVD of X itself, projections removed from X."""
EXERCISE = 'remove_top_directions'
MISTAKE = 'no centring: the SVD of X itself, projections removed from X'
EXPECT = 'without centring'

import torch


def remove_top_directions(X, k):
    top = torch.linalg.svd(X, full_matrices=False)[2][:k]
    return X - (X @ top.T) @ top
