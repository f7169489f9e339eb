"""Checks for chapter 05, embedding geometry and PCA (exercises/ch05_embedding_geometry.py).

References: brute-force cosine similarity in float64 for the neighbours, scikit-learn's PCA for the
components, projections and explained-variance ratios. Principal components are compared up to sign.

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...model import Case, Chapter, Exercise, Question
from ..build import cases
from .neighbors import NEIGHBOR_INPUTS, _check_neighbors
from .pca import PCA_INPUTS, RATIO_INPUTS, _check_full_ratio, _check_pca, _naming_cancellation
from .directions import REMOVE_INPUTS, _check_remove_top


CHAPTER = Chapter(
    number="05",
    module="ch05_embedding_geometry",
    title="Embedding geometry and PCA",
    exercises=[
        Exercise(
            "cosine_neighbors", "the k rows most similar to one row by cosine, itself excluded -> LongTensor [k]",
            cases(NEIGHBOR_INPUTS, _check_neighbors),
            hint="Cosine similarity = a.b / (|a| |b|): divide every row by its length (E.norm(dim=1, keepdim=True)), "
                 "then one matrix-vector product gives all similarities. Set the query's own similarity to -inf "
                 "and sort with torch.sort(..., descending=True, stable=True) so ties keep the lower index first.",
            uses_course_model=True,
        ),
        Exercise(
            "pca", "PCA by centring and SVD -> (projections [n, k], components [k, d], ratio [k])",
            cases(PCA_INPUTS, _naming_cancellation(_check_pca)),
            hint="Centre X first (subtract the mean row). torch.linalg.svd(Xc, full_matrices=False) returns U, S, Vh: "
                 "one of them holds the directions as rows, largest variance first. The projections are the centred "
                 "rows measured along those directions, and the variance along component i is proportional to "
                 "S[i]**2.",
            uses_course_model=True,
        ),
        Exercise(
            "explained_variance_ratio", "share of the total variance per principal component -> [min(n, d)]",
            cases(RATIO_INPUTS, _naming_cancellation(_check_full_ratio)),
            hint="The singular values S of the CENTRED data hold it all: the variance along component i is "
                 "S[i]**2 / (n - 1), and the ratio divides that by the sum over all components.",
            uses_course_model=True,
        ),
        Exercise(
            "remove_top_directions", "stretch: all-but-the-top: centre, remove the top-k principal directions",
            [Case(name, make, _naming_cancellation(_check_remove_top)) for name, make in REMOVE_INPUTS.items()],
            hint="Centre: C = X - X.mean(dim=0). The top-k directions are the first k rows of Vh in "
                 "torch.linalg.svd(C, full_matrices=False). Return C - (C @ V.T) @ V. The result does not depend on "
                 "the signs of the rows of V.",
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "You rank the neighbours of ' Monday' by the dot product E @ E[i] instead of the cosine. What "
                    "goes wrong?",
                 {"a": "nothing: the order is the same",
                  "b": "long rows rank high whatever their direction",
                  "c": "only that it is slower",
                  "d": "the token itself drops out of its own neighbour list"},
                 "5d83383c417047d6984d",
                 "Reread 'Cosine similarity, not the dot product' in notebook 05."),
        Question(2, "You run the SVD on X without subtracting the mean row, and the rows of X share a large mean. "
                    "The first 'component' then:",
                 {"a": "it becomes the direction of the smallest variance instead",
                  "b": "it becomes exactly zero, as the mean cancels it",
                  "c": "it points roughly along the mean, with an inflated share",
                  "d": "nothing changes, because the SVD centres X by itself"},
                 "25c57849f8c419bffa97",
                 "Reread 'PCA from scratch' in notebook 05."),
        Question(3, "After centring, Xc = U S Vh. The explained-variance ratio of component i is:",
                 {"a": "S[i]**2 / sum(S**2)",
                  "b": "S[i] / sum(S)",
                  "c": "S[i]**2 / (n - 1)",
                  "d": "S[i] / S[0], relative to the first"},
                 "b0875556694f6bcf57a5",
                 "Reread 'PCA from scratch' in notebook 05."),
        Question(4, "In this model the cosine of two random tokens is clearly positive on average, and about 0 once "
                    "the mean embedding is subtracted. What does that tell you?",
                 {"a": "most tokens in the vocabulary are near-synonyms of each other",
                  "b": "the quantisation to 8 bits broke the embeddings",
                  "c": "centring destroys what the vectors mean, so use raw cosines",
                  "d": "all rows share a mean direction that inflates raw cosines"},
                 "f66248a27b6c9c7f52bc",
                 "Reread 'Anisotropy' in notebook 05."),
        Question(5, "Your PCA returns component -v with projection column -p where scikit-learn returns v and p. "
                    "Your answer is:",
                 {"a": "wrong: a component's first entry must be positive",
                  "b": "equally right: v and -v span the same axis",
                  "c": "right only if you also negate its explained-variance ratio",
                  "d": "right only when k = 1"},
                 "74d143cdb91bc5cc9361",
                 "Reread 'PCA from scratch' (the sign of a component) in notebook 05."),
        Question(6, "After centring, the singular values of Xc are S = [4, 2, 2]. What share of the variance does "
                    "the first component explain?",
                 {"a": "0.50", "b": "0.67", "c": "0.33", "d": "0.80"},
                 "8f907e143f1644512164",
                 "Reread the explained-variance ratio in notebook 05: it uses the squared singular values."),
    ],
)
