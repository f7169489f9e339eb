"""Checks for chapter 06, the logit lens (exercises/ch06_logit_lens.py).

The judge's lens does not read `output_hidden_states`: it records each block's raw output
with forward hooks, applies the final norm and the LM head itself, and takes the last row
from the model's own logits. So a learner result that agrees with it agrees with the model.

One module per part of the chapter; this one assembles CHAPTER."""
from __future__ import annotations

from ...i18n import _
from ...model import Chapter, Exercise, Question
from ..build import cases
from .lens import KL_INPUTS, LENS_INPUTS, RANK_INPUTS, _check_kl, _check_lens, _check_rank
from .tuned_lens import TUNED_INPUTS, _check_tuned_lens
from ..unchanged import leave_inputs_unchanged
from .generated import with_generated


CHAPTER = with_generated(leave_inputs_unchanged(Chapter(
    number="06",
    module="ch06_logit_lens",
    title=_("The logit lens"),
    exercises=[
        Exercise(
            "logit_lens", _("final norm + LM head on every layer's state at the last position -> [N + 1, V] log-probs"),
            cases(LENS_INPUTS, _check_lens),
            hint=_("model(input_ids, output_hidden_states=True).hidden_states holds N + 1 tensors [1, T, d]. "
                   "Find the final norm on model.base_model (.norm for llama/qwen3, .ln_f for gpt2) and the head "
                   "with model.get_output_embeddings(). Before normalising every state, check whether each one "
                   "needs it: the lens's last row must equal log_softmax(model(...).logits[0, -1])."),
            timeout_s=120.0,
            uses_course_model=True,
        ),
        Exercise(
            "target_rank_by_layer", _("rank of one token in every row of a lens (0 = top)"),
            cases(RANK_INPUTS, _check_rank),
            hint=_("The rank of the target in a row is how many tokens score strictly higher than it. "
                   "Compare the whole row with the target's column (keep the dimension) and count."),
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "kl_to_final", _("KL(final || layer) for every layer of a lens, zero for the last"),
            cases(KL_INPUTS, _check_kl),
            hint=_("KL(P || Q) = sum_v P(v) * (log P(v) - log Q(v)) with P the final distribution (the last row, "
                   "exponentiated) and Q each layer's. Broadcasting the last row against all rows does it at once."),
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "fit_tuned_lens", _("stretch: a per-layer affine lens by ridge regression in closed form -> (A, b)"),
            cases(TUNED_INPUTS, _check_tuned_lens),
            hint=_("In float64: centre both, Xc = X - X.mean(0) and Yc = Y - Y.mean(0) (the unpenalised bias drops "
                   "out). Then A = torch.linalg.solve(Xc.T @ Xc + ridge * I, Xc.T @ Yc) and b = Y.mean(0) - "
                   "X.mean(0) @ A. Cast both back to the input dtype."),
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, _("A model with N transformer blocks, called with output_hidden_states=True, returns how many "
                      "hidden states?"),
                 {"a": "N + 1", "b": "N", "c": "N - 1", "d": _("2N, one after attention and one after the MLP")},
                 "918fe09bb6a43672d114",
                 _("Reread 'What `output_hidden_states` returns' in notebook 06a.")),
        Question(2, _("In transformers 5, the LAST entry of output_hidden_states is:"),
                 {"a": _("the raw output of the last block, before any norm"),
                  "b": _("the logits over the vocabulary"),
                  "c": _("the output of the embedding layer, before block 1"),
                  "d": _("the last block's output after the final norm")},
                 "e14b704107b12969e14d",
                 _("Reread 'What `output_hidden_states` returns' and the forward hook in notebook 06a.")),
        Question(3, _("The logit lens decodes an intermediate residual-stream state by:"),
                 {"a": _("taking its nearest embedding row by Euclidean distance"),
                  "b": _("applying the LM head to it directly, without any norm"),
                  "c": _("running it through the blocks that remain after it"),
                  "d": _("applying the final norm, then the LM head, to it")},
                 "20ead552281703da7e07",
                 _("Reread 'The lens on the real model' in notebook 06a.")),
        Question(4, _("On running text, the lens at layer 0 of a tied model mostly predicts the input token itself. "
                      "Why?"),
                 {"a": _("attention in the first block copies the previous token forward"),
                  "b": _("the tokenizer repeats tokens in running text"),
                  "c": _("the state is its own row, and a row scores high against itself"),
                  "d": _("the final norm removes the signal of every other token")},
                 "e04ac06e1be72f209c2b",
                 _("Reread 'Layer 0 predicts the input token' in notebook 06b.")),
        Question(5, _("You skip the final norm for the middle layers (say 10 to 25). What do you see there?"),
                 {"a": _("the same picture as with the norm, only a little noisier"),
                  "b": _("an error, since the shapes of the states no longer match"),
                  "c": _("confident nonsense, and a much larger KL to the final output"),
                  "d": _("the right answer shows up several layers earlier than before")},
                 "059f7828168ac1f0182b",
                 _("Reread section 5, 'Two easy mistakes', in notebook 06b.")),
        Question(6, _("The final distribution is P = [0.8, 0.2] and a layer's lens gives Q = [0.4, 0.6]. What is KL(P "
                      "|| Q) in nats, the quantity kl_to_final computes?"),
                 {"a": "0.33", "b": "0.38", "c": "0.00", "d": "0.69"},
                 "d685ae4803f74e746f7b",
                 _("Reread 'The lens on the real model' (the KL part) in notebook 06a: KL(P || Q) = sum P (log P - "
                   "log Q), with P the final distribution.")),
    ],
)))
