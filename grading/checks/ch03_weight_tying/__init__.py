"""Checks for chapter 03, weight tying (exercises/ch03_weight_tying.py).

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...i18n import _
from ...model import Case, Chapter, Exercise, Question
from ...techniques import TIE_FLAG, WEIGHT_GIVEN, needs
from ..build import cases
from .tying import TIE_INPUTS, UNTIE_INPUTS, _check_tying, _check_untie
from .counting import COUNT_INPUTS, SHARE_INPUTS, _check_count, _check_share, _check_untied
from .gradients import ROWS_INPUTS, _check_rows, _rows_inputs
from ..unchanged import leave_inputs_unchanged
from ..properties import with_generated
from .generated import GENERATED


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="03",
    module="ch03_weight_tying",
    title=_("Weight tying"),
    exercises=[
        Exercise(
            "tie_weights", _("make the head use the embedding's Parameter (shared, not copied)"),
            cases(TIE_INPUTS, _check_tying, "observe_tying"),
            hint=_("A module's parameter is an attribute: assigning a Parameter to head.weight replaces it. "
                   "Which object should head.weight be afterwards? Copying values (copy_, clone, .data) is not "
                   "sharing."),
            source_check=needs({"observe_tying": ([{WEIGHT_GIVEN, "register_parameter", "setattr"}], _(
                "Tied, says your function's process, but the judge's own reading of your file finds no assignment "
                "that gives the head an existing Parameter (head.weight = embedding.weight, setattr or "
                "register_parameter) in tie_weights or the functions it calls. Write the assignment in your "
                "function."))}),
        ),
        Exercise(
            "count_parameters", _("parameters counted once per tensor"),
            cases(COUNT_INPUTS, _check_count),
            hint=_("model.parameters() yields every Parameter once, even when several modules hold it. "
                   "state_dict() lists names (and buffers), not tensors."),
            uses_course_model=True,
        ),
        Exercise(
            "embedding_share", _("fraction of a tied model's parameters in its V x d table"),
            [Case(_(n), (lambda v=v: v), _check_share(n)) for n, v in SHARE_INPUTS.items()],
            hint=_("One table holds V * d numbers. In a tied model it is counted once in total_params."),
        ),
        Exercise(
            "untied_total", _("parameters the same model would have with an untied head"),
            [Case(_(n), (lambda v=v: v), _check_untied(n)) for n, v in SHARE_INPUTS.items()],
            hint=_("Untying gives the head its own V x d matrix; nothing else changes. Keep it an int."),
        ),
        Exercise(
            "rows_with_gradient", _("rows of a [V, d] gradient that are not all zero"),
            [Case(n, _rows_inputs(m), _check_rows) for n, m in ROWS_INPUTS.items()],
            hint=_("grad != 0 is a [V, d] boolean tensor; reduce it over the d axis with 'any', then count. "
                   "Return a Python int."),
        ),
        Exercise(
            "untie_lm_head",
            _("stretch: give a tied HF model its own head (a copy) that stays untied after save/reload"),
            cases(UNTIE_INPUTS, _check_untie, "stretch_untie"),
            hint=_("emb, head = model.get_input_embeddings(), model.get_output_embeddings(). If they share storage, "
                   "head.weight = nn.Parameter(emb.weight.detach().clone()). Then model.config.tie_word_embeddings = "
                   "False: without it from_pretrained ties them again."),
            timeout_s=60.0,
            source_check=needs({"stretch_untie": ([{TIE_FLAG}, {"Parameter", "deepcopy", "set_output_embeddings",
                                                                "register_parameter", "setattr", "Linear"}], _(
                "Untied, says your function's process, but the judge's own reading of your file does not find both "
                "halves in untie_lm_head or the functions it calls: a new head weight (nn.Parameter(...), "
                "copy.deepcopy, set_output_embeddings) and the config flag tie_word_embeddings. Write both in your "
                "function."))}),
        ),
    ],
    quiz=[
        Question(1, _("A config says tie_word_embeddings=True. This means:"),
                 {"a": _("the embedding is frozen during training"),
                  "b": _("the tokenizer uses one vocabulary for input and output text"),
                  "c": _("the head starts as a copy of the embedding and is then trained separately"),
                  "d": _("the LM head uses the same [V, d] tensor as the input embedding")},
                 "024b540e94dc16783b39",
                 _("Reread 'One tensor, two names' in notebook 03a.")),
        Question(2, _("In a tied model, how often does the shared matrix appear in model.state_dict() and in "
                      "model.parameters()?"),
                 {"a": _("once in each (the tie is only a flag)"),
                  "b": _("twice in each, one per name"),
                  "c": _("twice in state_dict, once in parameters()"),
                  "d": _("once in state_dict, twice in parameters()")},
                 "d1fa50e283355e697dcc",
                 _("Reread 'Counting each tensor once' in notebook 03a.")),
        Question(3, _("In an UNTIED model, after one backward pass, which rows of the input embedding have a non-zero "
                      "gradient?"),
                 {"a": _("none until the optimiser step has run"),
                  "b": _("every row, through the softmax over the vocabulary"),
                  "c": _("only the rows of the target tokens"),
                  "d": _("only the rows of tokens that appeared as inputs")},
                 "77efba451c4d95fee16d",
                 _("Reread 'The update rule, measured' in notebook 03b.")),
        Question(4, _("Why is the V x d table a much smaller share of a 70B model than of a 0.6B model?"),
                 {"a": _("large models use much smaller vocabularies"),
                  "b": _("the table grows like V·d, the blocks like L·d²"),
                  "c": _("large models have no embedding table"),
                  "d": _("large models keep their embedding in lower precision")},
                 "3f2c9526ddf4aba69cd6",
                 _("Reread 'Parameter accounting for the reference models' in notebook 03a.")),
        Question(5, _("Qwen3-0.6B (V = 151,936, d = 1,024) has 596,049,920 parameters with its table tied. How many "
                      "would it have with a separate head of the same shape?"),
                 {"a": "440,467,456", "b": "751,632,384", "c": "1,192,099,840", "d": "596,049,920"},
                 "4be654337ac7dadc79fe",
                 _("Reread 'Parameter accounting for the reference models' in notebook 03a: untying adds one more "
                   "V x d matrix, nothing else.")),
    ],
)), GENERATED)
