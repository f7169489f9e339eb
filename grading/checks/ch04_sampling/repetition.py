"""Chapter 04 stretch: repetition_penalty against transformers' RepetitionPenaltyLogitsProcessor."""
from __future__ import annotations

import torch

from ...i18n import _
from ..compare import expect_tensor
from ..fixtures import CAT_PROMPT, course_ids, random_ids, random_tensor
from .common import NEG_INF, _real


# ---------------------------------------------------------------- stretch: repetition_penalty


def _rep_ids(vocab: int, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Seen ids with repeats: drawn from the first half of the vocabulary only."""
    return random_ids(max(1, vocab // 2), shape, seed)


def _rep_special() -> tuple:
    """Seen tokens whose logits are 0, -inf, positive and negative; the rows see different tokens."""
    x = torch.tensor([[0.0, NEG_INF, 3.0, -2.0, 1.0, -0.5], [0.0, NEG_INF, 3.0, -2.0, 1.0, -0.5]])
    return x, torch.tensor([[0, 1, 2, 3, 3, 3], [4, 5, 4, 5, 4, 5]]), 1.5


def _rep_real() -> tuple:
    ids = course_ids(CAT_PROMPT + " mat. The cat sat on the")[None]
    return _real()[None], ids, 1.2


REPETITION_INPUTS = {
    _("the docstring's example: [[2, -1, 0.5]], ids [[0, 1, 1]], penalty 2"): lambda: (
        torch.tensor([[2.0, -1.0, 0.5]]), torch.tensor([[0, 1, 1]]), 2.0),
    _("a batch [4, 50], ids [4, 12] with repeats, penalty 1.3 (rows see different tokens)"): lambda: (
        random_tensor((4, 50), 80, 2.0), _rep_ids(50, (4, 12), 81), 1.3),
    _("one token repeated 20 times: penalised once, not 20 times, penalty 1.5"): lambda: (
        random_tensor((2, 10), 82, 2.0), torch.tensor([[3] * 20, [7] * 20]), 1.5),
    _("logits 0 and -inf among the seen tokens, penalty 1.5"): _rep_special,
    _("penalty 0.5 < 1 rewards repeats"): lambda: (random_tensor((3, 30), 83, 2.0), _rep_ids(30, (3, 9), 84), 0.5),
    _("penalty 1.0 changes nothing"): lambda: (random_tensor((2, 20), 85), _rep_ids(20, (2, 6), 86), 1.0),
    _("no tokens seen yet: ids [2, 0]"): lambda: (random_tensor((2, 15), 87), torch.zeros(2, 0, dtype=torch.long), 1.4),
    _("every token seen, V = 8, penalty 3"): lambda: (random_tensor((2, 8), 88, 2.0), torch.arange(8).repeat(2, 2), 3.0),
    _("float64 keeps float64, penalty 1.25"): lambda: (
        random_tensor((2, 40), 89, 2.0, torch.float64), _rep_ids(40, (2, 15), 90), 1.25),
    _("the course model's logits after 'The cat sat on the mat. The cat sat on the', penalty 1.2"): _rep_real,
}


def _counts(input_ids: torch.Tensor, V: int) -> torch.Tensor:
    """[B, V] number of times each token occurs in each row."""
    return torch.zeros(input_ids.shape[0], V, dtype=torch.long).scatter_add_(
        -1, input_ids, torch.ones_like(input_ids))


def _check_repetition(out, inputs):
    import math

    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    x, ids, penalty = inputs
    expected = RepetitionPenaltyLogitsProcessor(penalty=float(penalty))(ids, x.clone())
    counts = _counts(ids, x.shape[-1])
    seen = counts > 0
    p = float(penalty)

    def scaled(mask: torch.Tensor, pos: torch.Tensor | float, neg: torch.Tensor | float) -> torch.Tensor:
        return torch.where(mask, torch.where(x < 0, x * neg, x / pos), x)

    powers = torch.tensor(p, dtype=torch.float64) ** counts.double()
    mistakes = [
        (_("you divided every seen logit by the penalty: a NEGATIVE logit divided by a penalty > 1 moves towards 0, "
           "which makes the token MORE likely. Multiply negative logits by the penalty, divide positive ones."),
         lambda: torch.where(seen, x / p, x)),
        (_("you swapped the two rules: positive logits are divided by the penalty, negative ones multiplied."),
         lambda: torch.where(seen, torch.where(x < 0, x / p, x * p), x)),
        (_("you applied the penalty once per occurrence (penalty ** count): transformers penalises each seen token "
           "ONCE, however often it occurs (gather the seen logits, then scatter them back, or build a seen mask)."),
         lambda: torch.where(seen, torch.where(x < 0, x * powers, x / powers), x.double()).to(x.dtype)),
        (_("you penalised the tokens seen in ANY row: each row uses only its own ids (gather/scatter along dim=-1)."),
         lambda: scaled(seen.any(0, keepdim=True).expand_as(x), p, p)),
        (_("you penalised the tokens NOT seen: the penalty applies to the tokens in input_ids."),
         lambda: scaled(~seen, p, p)),
        (_("you subtracted log(penalty) from the seen logits (a presence-style penalty); the repetition penalty "
           "divides positive logits and multiplies negative ones."), lambda: torch.where(seen, x - math.log(p), x)),
    ]
    expect_tensor(out, expected, _("logits after repetition penalty {penalty}", penalty=penalty), atol=0, rtol=1e-6,
                  mistakes=mistakes)
