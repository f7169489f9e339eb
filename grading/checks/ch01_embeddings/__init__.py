"""Checks for chapter 01, embedding lookup (exercises/ch01_embeddings.py): the chapter, its exercises and quiz.
The named cases and their checks are in named_cases.py, the generated inputs in generated.py."""
from __future__ import annotations

from ..build import cases
from ...i18n import _
from ...model import Case, Chapter, Exercise, Question
from ...techniques import CUSTOM_FUNCTION, PRODUCTS, needs
from ..properties import with_generated
from ..unchanged import leave_inputs_unchanged
from .named_cases import (AUTOGRAD_INPUTS, BACKWARD_INPUTS, LOOKUP_INPUTS, OFFSET_INPUTS, _check_autograd, _check_backward,
                    _check_lookup, _check_offset, _check_offset_real, _check_onehot, _real_offset_inputs)
from .generated import GENERATED


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="01",
    module="ch01_embeddings",
    title=_("Embedding lookup"),
    exercises=[
        Exercise(
            "lookup", _("rows of E for ids of any shape -> [*ids.shape, d]"),
            cases(LOOKUP_INPUTS, _check_lookup),
            hint=_("Indexing a tensor with a tensor of ids returns one row per id, in the ids' shape. "
                   "Nothing to multiply."),
            uses_course_model=True,
        ),
        Exercise(
            "lookup_onehot", _("the same rows through one_hot(ids) @ E"),
            cases(LOOKUP_INPUTS, _check_onehot, "record_ops"),
            hint=_("F.one_hot(ids, num_classes=V) has shape [*ids.shape, V] and integer dtype; convert it with "
                   ".to(E.dtype) (not .float(): some tables are float16 or bfloat16) before the product with E "
                   "([V, d])."),
            uses_course_model=True,
            source_check=needs({"record_ops": ([{"one_hot"}, PRODUCTS], _(
                "Right rows, but the judge's own reading of your file finds no one_hot(...) and no matrix product (@, "
                "torch.matmul, ...) in lookup_onehot or the functions it calls. This exercise is the product "
                "one_hot(ids) @ E, written in your function."))}),
        ),
        Exercise(
            "row_byte_offset", _("byte offset of row i in a contiguous [V, d] table"),
            cases(OFFSET_INPUTS, _check_offset, constant=True)
            + [Case(_("row of ' cat' in the real E, checked with data_ptr()"), _real_offset_inputs,
                     _check_offset_real)],
            hint=_("A row-major [V, d] table has strides (d, 1) in elements. "
                   "torch.empty(0, dtype=dtype).element_size() gives the bytes per element."),
            uses_course_model=True,
        ),
        Exercise(
            "embedding_backward", _("gradient of the table: rows scattered back and summed"),
            cases(BACKWARD_INPUTS, _check_backward),
            hint=_("Start from zeros [V, d]; every position t adds grad_out[t] into row ids[t]. Flatten ids and "
                   "grad_out first so any shape works."),
        ),
        Exercise(
            "embedding_autograd",
            _("stretch: the lookup as a torch.autograd.Function whose backward is your scatter-add"),
            cases(AUTOGRAD_INPUTS, _check_autograd, "stretch_autograd"),
            hint=_("In forward: ctx.save_for_backward(ids); ctx.vocab_size = E.shape[0]; return E[ids] (autograd is "
                   "off inside forward). In backward: (ids,) = ctx.saved_tensors; return embedding_backward(grad_out, "
                   "ids, ctx.vocab_size), None. Then embedding_autograd returns EmbeddingLookup.apply(E, ids)."),
            uses_course_model=True,
            source_check=needs({"stretch_autograd": ([{CUSTOM_FUNCTION}, {"apply"}], _(
                "Right values, but the judge's own reading of your file finds no torch.autograd.Function subclass "
                "with a backward, called with .apply, in embedding_autograd or what it calls. Write the Function in "
                "your file and return EmbeddingLookup.apply(E, ids)."))}),
        ),
    ],
    quiz=[
        Question(1, _("The embedding matrix E of a model with vocabulary V and width d has shape:"),
                 {"a": "[d, V]", "b": "[V, d]", "c": "[V, V]", "d": _("[T, d] for T tokens")},
                 "25eeca84f03ac8de03c6",
                 _("Reread 'E is a table of rows' in notebook 01a.")),
        Question(2, _("Looking up token id i gives the same vector as:"),
                 {"a": "one_hot(i) @ E", "b": _("column i of E"), "c": "E @ one_hot(i)", "d": "softmax(E)[i]"},
                 "36044b37cb4716c48612",
                 _("Reread 'Lookup is a product with a one-hot matrix' in notebook 01a.")),
        Question(3, _("In a contiguous float32 [V, d] table, row i starts this many bytes after row 0:"),
                 {"a": "i * d", "b": "i * 4", "c": "i * d * 4", "d": "(i + 1) * d * 4"},
                 "ee6774e7fe2406085ae8",
                 _("Reread 'Memory layout' in notebook 01a.")),
        Question(4, _("Token id 5 appears twice in a batch. The gradient of E's row 5 is:"),
                 {"a": _("the mean of the two gradients"),
                  "b": _("the last of the two"),
                  "c": _("their sum"),
                  "d": _("zero")},
                 "7720ec03f1ac7ad9a48b",
                 _("Reread 'Backward: scatter-add' in notebook 01b.")),
        Question(5, _("Token ids [3, 7, 3] receive upstream gradient rows filled with 1.0, 2.0 and 5.0. Every entry "
                      "of the gradient of E's row 3 is:"),
                 {"a": "5.0", "b": "8.0", "c": "3.0", "d": "6.0"},
                 "c938c65457850e4cf41e",
                 _("Reread 'Backward: scatter-add' in notebook 01b: each position adds its gradient into its own "
                   "row.")),
    ],
)), GENERATED)
