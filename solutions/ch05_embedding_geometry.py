"""Reference solutions for chapter 05 (embedding geometry and PCA)."""
import torch
from torch import Tensor


def cosine_neighbors(E: Tensor, index: int, k: int) -> Tensor:
    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    sims[index] = -float("inf")  # never the query row itself
    return torch.sort(sims, descending=True, stable=True).indices[:k]  # stable: ties keep the lower index first


def pca(X: Tensor, k: int) -> tuple[Tensor, Tensor, Tensor]:
    centred = X - X.mean(dim=0)
    U, S, Vh = torch.linalg.svd(centred, full_matrices=False)
    components = Vh[:k]
    projections = centred @ components.T
    ratio = S[:k] ** 2 / (S ** 2).sum()
    return projections, components, ratio


def explained_variance_ratio(X: Tensor) -> Tensor:
    S = torch.linalg.svdvals(X - X.mean(dim=0))
    return S ** 2 / (S ** 2).sum()


def remove_top_directions(X: Tensor, k: int) -> Tensor:
    centred = X - X.mean(dim=0)
    top = torch.linalg.svd(centred, full_matrices=False)[2][:k]  # [k, d], largest variance first
    return centred - (centred @ top.T) @ top


QUIZ = {1: "b", 2: "d", 3: "a", 4: "d", 5: "a", 6: "b"}
