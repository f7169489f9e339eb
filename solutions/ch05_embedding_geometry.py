"""Chapter 05 exercises: embedding geometry and PCA.

Fill in each function, then run `python judge.py 05` (or `python judge.py pca` for one exercise).
`python judge.py hint pca` gives a hint without the answer.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise: the judge
compares them before and after your call.
"""
import torch
from torch import Tensor


def cosine_neighbors(E: Tensor, index: int, k: int) -> Tensor:
    """The k rows of E most similar to row `index` by cosine similarity, most similar first.

    E:     [n, d] float table; no row is all zeros, but row lengths can differ a lot: rows as short as 1e-11
           count as much as long ones, so divide by the norms themselves (an epsilon added to them, or
           F.cosine_similarity's eps = 1e-8, changes the ranking of short rows).
    index: the query row, 0 <= index < n. It is never part of the answer.
    k:     how many neighbours, 1 <= k <= n - 1.
    returns: LongTensor [k] of row indices. Rows with the same similarity (duplicate rows,
             for instance) come lower index first.

    Example: E = torch.tensor([[1., 0.], [10., 1.], [0., 1.], [2., 0.]])
             cosine_neighbors(E, 0, 2) -> tensor([3, 1])
             (row 3 points exactly the same way, cos 1.0; row 1 almost, cos 0.995)
    """
    # BEGIN SOLUTION
    unit = E / E.norm(dim=1, keepdim=True)
    sims = unit @ unit[index]
    sims[index] = -float("inf")  # never the query row itself
    return torch.sort(sims, descending=True, stable=True).indices[:k]  # stable: ties keep the lower index first
    # END SOLUTION


def pca(X: Tensor, k: int) -> tuple[Tensor, Tensor, Tensor]:
    """Principal component analysis of the rows of X, keeping the top k components.

    X: [n, d] float data, one sample per row, NOT centred. 1 <= k <= min(n, d).
    returns (projections, components, ratio), all in X's dtype:
      components:  [k, d], one unit-length direction per ROW, mutually orthogonal, largest variance
                   first. A component may point either way: -v is as good an answer as v.
      projections: [n, k], the coordinates of each row of X along the components, measured from the
                   mean row (flip a component and its column of projections flips with it).
      ratio:       [k], the fraction of X's total variance that each component explains.

    Example: X = torch.tensor([[0., 0.], [2., 0.], [4., 1.], [6., 1.]])
             pca(X, 1) -> projections ~ [[-3.040], [-1.079], [1.079], [3.040]] (or all signs flipped),
                          components ~ [[0.980, 0.198]] (or its negative), ratio ~ [0.991]
    """
    # BEGIN SOLUTION
    centred = X - X.mean(dim=0)
    U, S, Vh = torch.linalg.svd(centred, full_matrices=False)
    components = Vh[:k]
    projections = centred @ components.T
    ratio = S[:k] ** 2 / (S ** 2).sum()
    return projections, components, ratio
    # END SOLUTION


def explained_variance_ratio(X: Tensor) -> Tensor:
    """The fraction of X's total variance explained by each principal component, largest first.

    X: [n, d] float data, one sample per row, not centred.
    returns: [min(n, d)] in X's dtype, in decreasing order; the values sum to 1.

    Example: X = torch.tensor([[0., 0.], [2., 0.], [4., 1.], [6., 1.]])
             explained_variance_ratio(X) -> ~[0.991, 0.009]
    """
    # BEGIN SOLUTION
    S = torch.linalg.svdvals(X - X.mean(dim=0))
    return S ** 2 / (S ** 2).sum()
    # END SOLUTION


def remove_top_directions(X: Tensor, k: int) -> Tensor:
    """Stretch: "all-but-the-top" post-processing (Mu and Viswanath, 2018): centre X, then remove from every row
    its projection on the top-k principal directions.

    X: [n, d] float data, one sample per row, not centred;  0 <= k <= min(n, d).
    returns: [n, d] in X's dtype: X - mean - (X - mean) @ V_k.T @ V_k, where V_k [k, d] holds the top-k principal
             directions (unit rows). k = 0 only centres; the result has column mean 0 and no variance left along
             the removed directions. It does not depend on the signs (or, for equal variances, the basis) chosen.

    Example: X = torch.tensor([[0., 0.], [2., 0.], [4., 1.], [6., 1.]]), k = 1
             -> ~[[-0.021, 0.102], [0.058, -0.286], [-0.058, 0.286], [0.021, -0.102]]
    """
    # BEGIN SOLUTION
    centred = X - X.mean(dim=0)
    top = torch.linalg.svd(centred, full_matrices=False)[2][:k]  # [k, d], largest variance first
    return centred - (centred @ top.T) @ top
    # END SOLUTION


# Chapter 05 quiz: `python judge.py quiz 05` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d", 5: "a"}.
QUIZ = {1: "a", 2: "d", 3: "c", 4: "b", 5: "a", 6: "b"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None, 6: None}
