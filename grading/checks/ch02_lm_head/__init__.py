"""Checks for chapter 02, the LM head (exercises/ch02_lm_head.py).

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...i18n import _
from ...model import Chapter, Exercise, Question
from ..build import cases
from .head import (CONTRIB_INPUTS, FLOPS_INPUTS, LOGITS_INPUTS, TOPK_INPUTS, _check_contributions, _check_flops,
                   _check_logits, _check_topk)
from .chunked import CHUNKED_INPUTS, _check_chunked
from ..unchanged import leave_inputs_unchanged
from ..properties import with_generated
from .generated import GENERATED


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="02",
    module="ch02_lm_head",
    title=_("The LM head"),
    exercises=[
        Exercise(
            "lm_head_logits", _("h [..., d] and W [V, d] (+ optional bias [V]) -> logits [..., V]"),
            cases(LOGITS_INPUTS, _check_logits),
            hint=_("W holds one row per token, [V, d], like nn.Linear(d, V).weight. Every logit is h dotted with "
                   "a row, so multiply by W transposed; the @ operator broadcasts over the leading dimensions of h."),
            uses_course_model=True,
        ),
        Exercise(
            "top_k_tokens", _("the k largest logits and their ids, descending, ties to the lower id"),
            cases(TOPK_INPUTS, _check_topk),
            hint=_("torch.topk makes no promise about the order of equal values. A stable sort keeps equal values in "
                   "their original (id) order: look at torch.sort's arguments. Return (values, ids), ids as int64."),
            uses_course_model=True,
        ),
        Exercise(
            "lm_head_flops", _("operations of the head for some positions (a multiply-add counts 2)"),
            cases(FLOPS_INPUTS, _check_flops, constant=True),
            hint=_("One logit is one dot product of length d: d multiplications and d additions. Count the logits."),
        ),
        Exercise(
            "logit_contributions", _("per-dimension products h[i] * w[i] and the cosine of the angle"),
            cases(CONTRIB_INPUTS, _check_contributions),
            hint=_("The products sum to the logit <h, w>; the cosine is that sum divided by |h| |w|. Watch out for a "
                   "zero vector (return 0.0 there), and return cos as a Python float."),
            uses_course_model=True,
        ),
        Exercise(
            "topk_logits_chunked", _("stretch: top-k of h @ W.T over vocabulary chunks, never forming [N, V] logits"),
            cases(CHUNKED_INPUTS, _check_chunked, "record_ops"),
            hint=_("For start in range(0, V, chunk): logits = h @ W[start:start + chunk].T and their ids "
                   "torch.arange(start, start + c). Concatenate them with the best k so far and keep the best k again: "
                   "sort the candidates by id, then stably by value (descending), so equal values keep the lower id."),
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, _("A model has vocabulary size V and hidden size d. Its LM head weight, as nn.Linear stores it "
                      "(model.lm_head.weight), has shape:"),
                 {"a": "[d, V]", "b": "[d, d]", "c": "[V, d]", "d": "[V, V]"},
                 "7eb10e8c912c3601f6e4",
                 _("Reread 'The head is one matrix' in notebook 02a.")),
        Question(2, _("What is row j of the LM head weight?"),
                 {"a": _("V numbers, one per vocabulary entry: how often each token followed token j in training"),
                  "b": _("a learned d-dimensional vector; token j's logit is its inner product with h"),
                  "c": _("a fixed random vector drawn at initialisation and never changed by training"),
                  "d": _("the hidden state the model produced the last time it emitted token j, kept as a cache")},
                 "b36d505eca3323aeb496",
                 _("Reread 'Each logit is an inner product' in notebook 02a.")),
        Question(3, _("To generate the token after a 1,000-token prompt, for how many positions must the prefill "
                      "compute the LM head?"),
                 {"a": "1", "b": "1,000", "c": "999", "d": _("none: the head is only used in training")},
                 "21b72480a1b579d679ef",
                 _("Reread 'What the head costs' in notebook 02b.")),
        Question(4, _("Which statement about logits is true?"),
                 {"a": _("they are probabilities, so each row of logits sums to 1"),
                  "b": _("they are cosines, so each one lies between -1 and 1"),
                  "c": _("they are never negative, since softmax needs positive inputs"),
                  "d": _("they are unbounded scores; softmax makes them probabilities")},
                 "85fd70791744a5249d46",
                 _("Reread 'Logits are scores, probabilities sum to 1' in notebook 02a.")),
        Question(5, _("Two tokens' head rows have the same length. Which token gets the higher logit?"),
                 {"a": _("the one whose row makes the smaller angle with h"),
                  "b": _("the one with the lower id"),
                  "c": _("the one whose row has the larger sum of entries"),
                  "d": _("neither: rows of equal length always get equal logits")},
                 "af57d9f3b001988a641b",
                 _("Reread 'Each logit is an inner product' in notebook 02a.")),
        Question(6, _("The course model's head is a 49,152 x 576 matrix. How many multiply-adds does it take to "
                      "compute the logits of ONE position?"),
                 {"a": "49,152", "b": "331,776", "c": "28,311,552", "d": "14,155,776"},
                 "2711efd8589ed4912450",
                 _("Reread 'What the head costs' in notebook 02b: one inner product of length d per vocabulary "
                   "row.")),
    ],
)), GENERATED)
