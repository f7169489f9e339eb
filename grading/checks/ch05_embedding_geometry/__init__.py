"""Checks for chapter 05, embedding geometry and PCA (exercises/ch05_embedding_geometry.py).

References: brute-force cosine similarity in float64 for the neighbours, scikit-learn's PCA for the
components, projections and explained-variance ratios. Principal components are compared up to sign.

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...i18n import _
from ...model import Case, Chapter, Exercise, Question
from ..build import cases
from .neighbors import NEIGHBOR_INPUTS, _check_neighbors
from .pca import PCA_INPUTS, RATIO_INPUTS, _check_full_ratio, _check_pca, _naming_cancellation
from .directions import REMOVE_INPUTS, _check_remove_top
from ..unchanged import leave_inputs_unchanged
from .generated import with_generated


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="05",
    module="ch05_embedding_geometry",
    title=_("Embedding geometry and PCA"),
    exercises=[
        Exercise(
            "cosine_neighbors", _("the k rows most similar to one row by cosine, itself excluded -> LongTensor [k]"),
            cases(NEIGHBOR_INPUTS, _check_neighbors),
            hint=_("Cosine similarity = a.b / (|a| |b|): divide every row by its length (E.norm(dim=1, keepdim=True)), "
                   "then one matrix-vector product gives all similarities. Set the query's own similarity to -inf "
                   "and sort with torch.sort(..., descending=True, stable=True) so ties keep the lower index first."),
            uses_course_model=True,
        ),
        Exercise(
            "pca", _("PCA by centring and SVD -> (projections [n, k], components [k, d], ratio [k])"),
            cases(PCA_INPUTS, _naming_cancellation(_check_pca)),
            hint=_("Centre X first (subtract the mean row). torch.linalg.svd(Xc, full_matrices=False) returns U, S, Vh: "
                   "one of them holds the directions as rows, largest variance first. The projections are the centred "
                   "rows measured along those directions, and the variance along component i is proportional to "
                   "S[i]**2."),
            uses_course_model=True,
        ),
        Exercise(
            "explained_variance_ratio", _("share of the total variance per principal component -> [min(n, d)]"),
            cases(RATIO_INPUTS, _naming_cancellation(_check_full_ratio)),
            hint=_("The singular values S of the CENTRED data hold it all: the variance along component i is "
                   "S[i]**2 / (n - 1), and the ratio divides that by the sum over all components."),
            uses_course_model=True,
        ),
        Exercise(
            "remove_top_directions", _("stretch: all-but-the-top: centre, remove the top-k principal directions"),
            [Case(name, make, _naming_cancellation(_check_remove_top)) for name, make in REMOVE_INPUTS.items()],
            hint=_("Centre: C = X - X.mean(dim=0). The top-k directions are the first k rows of Vh in "
                   "torch.linalg.svd(C, full_matrices=False). Return C - (C @ V.T) @ V. The result does not depend on "
                   "the signs of the rows of V."),
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, _("You rank the neighbours of ' Monday' by the dot product E @ E[i] instead of the cosine. What "
                      "goes wrong?"),
                 {"a": _("long rows rank high whatever their direction"),
                  "b": _("nothing: the order is the same"),
                  "c": _("only that it is slower"),
                  "d": _("the token itself drops out of its own neighbour list")},
                 "eca783c5f63dac413a60",
                 _("Reread section 2, 'Cosine similarity, not the dot product', in notebook 05a.")),
        Question(2, _("You run the SVD on X without subtracting the mean row, and the rows of X share a large mean. "
                      "What happens to the first 'component'?"),
                 {"a": _("it becomes the direction of the smallest variance instead"),
                  "b": _("it becomes exactly zero, as the mean cancels it"),
                  "c": _("nothing changes, because the SVD centres X by itself"),
                  "d": _("it points roughly along the mean, with an inflated share")},
                 "3721b71f0ed87e1d988d",
                 _("Reread section 7, 'PCA', in notebook 05b.")),
        Question(3, _("After centring, Xc = U S Vh. The explained-variance ratio of component i is:"),
                 {"a": _("S[i]**2 / (n - 1)"),
                  "b": _("S[i] / sum(S)"),
                  "c": _("S[i]**2 / sum(S**2)"),
                  "d": _("S[i] / S[0], relative to the first")},
                 "1e1269b94f995e6cb0a2",
                 _("Reread section 7, 'PCA', in notebook 05b.")),
        Question(4, _("In this model the cosine of two random tokens is clearly positive on average, and about 0 once "
                      "the mean embedding is subtracted. What does that tell you?"),
                 {"a": _("most tokens in the vocabulary are near-synonyms of each other"),
                  "b": _("all rows share a mean direction that inflates raw cosines"),
                  "c": _("centring destroys what the vectors mean, so use raw cosines"),
                  "d": _("the quantisation to 8 bits broke the embeddings")},
                 "00e7d3ddcb7c6f5ddf5b",
                 _("Reread section 10, 'Anisotropy', in notebook 05b.")),
        Question(5, _("Your PCA returns component -v with projection column -p where scikit-learn returns v and p. "
                      "Your answer is:"),
                 {"a": _("equally right: v and -v span the same axis"),
                  "b": _("wrong: a component's first entry must be positive"),
                  "c": _("right only if you also negate its explained-variance ratio"),
                  "d": _("right only when k = 1")},
                 "a9ff3009158ffe2f15b8",
                 _("Reread section 7, 'PCA' (the sign of a component), in notebook 05b.")),
        Question(6, _("After centring, the singular values of Xc are S = [4, 2, 2]. What share of the variance does "
                      "the first component explain?"),
                 {"a": "0.50", "b": "0.67", "c": "0.33", "d": "0.80"},
                 "8f907e143f1644512164",
                 _("Reread section 7, 'PCA' (the explained-variance ratio), in notebook 05b: it uses the squared singular values.")),
    ],
)))
