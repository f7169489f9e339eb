EXERCISE = 'pca'
MISTAKE = "each row centred by its own mean (dim=1) instead of subtracting the mean row"
EXPECT = 'centred each ROW by its own mean'

import torch


def pca(X, k):
    Xc = X - X.mean(dim=1, keepdim=True)
    U, S, Vh = torch.linalg.svd(Xc, full_matrices=False)
    comps = Vh[:k]
    return Xc @ comps.T, comps, (S ** 2 / (S ** 2).sum())[:k]
