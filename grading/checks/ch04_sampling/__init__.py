"""Checks for chapter 04, softmax and sampling (exercises/ch04_sampling.py).

References: float64 torch.softmax, transformers' own logits warpers (TemperatureLogitsWarper,
TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper, with their default min_tokens_to_keep=1),
torch.multinomial with an identically seeded generator, and model.generate(do_sample=False).

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

import torch

from ...i18n import _
from ...model import Case, Chapter, Exercise, Question
from ..build import cases
from ..fixtures import random_tensor
from .common import FIVE
from .softmax import SOFTMAX_INPUTS, TEMPERATURE_INPUTS, _check_raises, _check_softmax, _check_temperature
from .filters import _check_min_p, _check_top_k, _check_top_p, _min_p_inputs, _top_k_inputs, _top_p_inputs
from .sampling import (SAMPLE_INPUTS, STAT_INPUTS, _check_frequencies, _check_greedy_t0, _check_one_generator,
                       _check_seeded, _check_t0_interleaved)
from .greedy import GREEDY_INPUTS, _check_greedy
from .repetition import REPETITION_INPUTS, _check_repetition
from ..unchanged import leave_inputs_unchanged
from .generated import with_generated


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="04",
    module="ch04_sampling",
    title=_("Softmax and sampling"),
    exercises=[
        Exercise(
            "softmax", _("stable softmax along a dim: exp(x - max) / sum"),
            cases(SOFTMAX_INPUTS, _check_softmax),
            hint=_("Subtract logits.amax(dim=dim, keepdim=True) before exp: the largest entry becomes exp(0) = 1, "
                   "nothing overflows, and exp(-inf) = 0 handles masked tokens. Then divide by the sum along dim."),
            uses_course_model=True,
        ),
        Exercise(
            "apply_temperature", _("logits / T, ValueError for T <= 0"),
            cases(TEMPERATURE_INPUTS, _check_temperature)
            + [Case(_("temperature 0 raises ValueError"), lambda: (torch.tensor(FIVE), 0.0), _check_raises, "raises"),
               Case(_("temperature -0.5 raises ValueError"), lambda: (torch.tensor(FIVE), -0.5), _check_raises, "raises"),
               Case(_("temperature NaN raises ValueError (NaN is not > 0)"), lambda: (torch.tensor(FIVE), float("nan")),
                    _check_raises, "raises")],
            hint=_("Divide the logits (not the probabilities) by the temperature. Check the temperature first."),
        ),
        Exercise(
            "top_k_filter", _("keep the k largest logits (ties with the k-th kept), others -inf"),
            cases(_top_k_inputs(), _check_top_k),
            hint=_("torch.topk(logits, k, dim=-1).values[..., -1:] is the k-th largest value of each row; remove what "
                   "is strictly below it with masked_fill(..., float('-inf')). Clamp k to the vocabulary size first."),
            uses_course_model=True,
        ),
        Exercise(
            "top_p_filter", _("keep the smallest top set whose probability reaches p (crossing token kept)"),
            cases(_top_p_inputs(), _check_top_p),
            hint=_("Sort the probabilities. A token stays if the mass of the tokens MORE likely than it is still below "
                   "p; equivalently (transformers' way) sort ascending and remove tokens while the cumulative mass from "
                   "the bottom is <= 1 - p. Always keep the top token. Scatter the mask back to token order."),
            uses_course_model=True,
        ),
        Exercise(
            "min_p_filter", _("keep tokens with p_i >= min_p * p_max, others -inf"),
            cases(_min_p_inputs(), _check_min_p),
            hint=_("Compute softmax, the row maximum probability (amax(dim=-1, keepdim=True)), and remove tokens whose "
                   "probability is below min_p times it."),
            uses_course_model=True,
        ),
        Exercise(
            "sample_next_token", _("temperature -> top-k -> top-p -> one seeded torch.multinomial draw"),
            cases(SAMPLE_INPUTS, _check_seeded, "seeded")
            + [Case(_("one generator reused for 30 draws, V = 12, T = 0.9, top_p = 0.95"),
                    lambda: (random_tensor((12,), 46, 1.5), 0.9, None, 0.95), _check_one_generator, "one_generator"),
               Case(_("temperature 0 is the argmax (no draw), 5 random logit vectors"),
                    lambda: (random_tensor((5, 40), 47, 2.0),), _check_greedy_t0, "greedy_t0"),
               Case(_("temperature 0 takes no draw: T = 0 and T = 1 calls alternating on one generator, V = 10"),
                    lambda: (random_tensor((6, 10), 49, 1.0),), _check_t0_interleaved, "t0_interleaved")]
            + cases(STAT_INPUTS, _check_frequencies, "frequencies"),
            hint=_("If temperature == 0 return int(logits.argmax()). Otherwise apply_temperature, then top_k_filter if "
                   "top_k is not None, then top_p_filter if top_p is not None, then softmax over the whole vocabulary, "
                   "then int(torch.multinomial(probs, 1, generator=generator))."),
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "greedy_generate", _("a loop: forward, argmax of the last position, append; equals generate(do_sample=False)"),
            cases(GREEDY_INPUTS, _check_greedy, "greedy"),
            hint=_("Repeat max_new_tokens times: logits = model(ids).logits[:, -1, :]; next = logits.argmax(-1, "
                   "keepdim=True); ids = torch.cat([ids, next], dim=-1). Wrap it in torch.no_grad()."),
            timeout_s=120.0,
            uses_course_model=True,
        ),
        Exercise(
            "repetition_penalty", _("stretch: CTRL repetition penalty, equal to RepetitionPenaltyLogitsProcessor"),
            cases(REPETITION_INPUTS, _check_repetition),
            hint=_("Gather the seen logits, seen = logits.gather(-1, input_ids); penalise them with torch.where(seen < 0, "
                   "seen * penalty, seen / penalty); write them back with logits.scatter(-1, input_ids, ...). A repeated "
                   "id gathers the same original logit, so it is penalised once."),
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, _("Why does a careful softmax subtract max(logits) before exponentiating?"),
                 {"a": _("it moves probability towards the most likely token"),
                  "b": _("exp cannot overflow, and the result is unchanged"),
                  "c": _("it makes every logit positive"),
                  "d": _("it is only needed for log-softmax")},
                 "07804d7d12cc48bd5184",
                 _("Reread 'Overflow, and the max shift' in notebook 04a.")),
        Question(2, _("Logits [2.3, 1.5, 3.8, 0.5, 1.2] at temperature T = 0.5 instead of T = 1. The probability of "
                      "the top token (3.8):"),
                 {"a": _("decreases"), "b": _("does not change"), "c": _("increases"), "d": _("becomes exactly 1")},
                 "d3857a94f650af769ed7",
                 _("Reread 'Temperature' in notebook 04a.")),
        Question(3, _("Top-p with p = 0.9 on the probabilities 0.70, 0.16, 0.07, 0.05, 0.02 keeps how many tokens?"),
                 {"a": "2", "b": "3", "c": "4", "d": "5"},
                 "95f7923bb75051036654",
                 _("Reread section 6, 'Top-p (nucleus)', in notebook 04a, and count with its rule.")),
        Question(4, _("model.generate(do_sample=True, temperature=0.7, top_p=0.9) in transformers:"),
                 {"a": _("divides the logits by 0.7, then applies top-k and top-p"),
                  "b": _("applies top-p to the raw logits, then divides by 0.7"),
                  "c": _("applies only top-p, since temperature is ignored when top_p is set"),
                  "d": _("samples with each setting separately and averages")},
                 "fbb68a75abfe9f9e5424",
                 _("Reread 'Temperature + top-p, in the order transformers applies them' in notebook 04b.")),
        Question(5, _("In a tied model without bias, multiplying the final hidden vector h by 2 is the same as:"),
                 {"a": _("temperature 2"), "b": _("adding 2 to every logit"), "c": _("no change"), "d": _("temperature 0.5")},
                 "7b3aba3e0dd51665b6a2",
                 _("Reread 'Scaling h is a temperature' in notebook 04b.")),
    ],
)))
