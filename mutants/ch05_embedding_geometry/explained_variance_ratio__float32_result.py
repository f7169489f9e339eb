EXERCISE = 'explained_variance_ratio'
MISTAKE = 'the SVD taken on a float32 copy "because float32 is enough for a ratio": float64 data comes back as float32'
EXPECT = 'your result is float32 when the input is float64'

import torch


def explained_variance_ratio(X):
    S = torch.linalg.svdvals((X - X.mean(dim=0)).float())
    return S ** 2 / (S ** 2).sum()
