"""Chapter 04: greedy_generate against model.generate(do_sample=False), up to near-ties."""
from __future__ import annotations

import torch

from ...i18n import _
from ..compare import CheckFailed, expect_tensor
from ..fixtures import CAT_PROMPT, cached_tiny_model, course_ids, course_model, random_ids
from ..memo import per_input


# ---------------------------------------------------------------- greedy_generate


GREEDY_INPUTS = {
    _("tiny random Llama (V=128, d=32, 2 layers), a prompt of 6 tokens, 8 new tokens"):
        lambda: (cached_tiny_model("llama", 0), random_ids(128, (1, 6), 50), 8),
    _("tiny random Qwen3, a batch of 2 prompts of 5 tokens, 6 new tokens"):
        lambda: (cached_tiny_model("qwen3", 1), random_ids(128, (2, 5), 51), 6),
    _("tiny random GPT-2, a 1-token prompt, 10 new tokens"):
        lambda: (cached_tiny_model("gpt2", 2), random_ids(128, (1, 1), 52), 10),
    _("max_new_tokens = 0 returns the prompt"): lambda: (cached_tiny_model("llama", 0), random_ids(128, (1, 4), 53), 0),
    _("tiny Llama whose end-of-sequence token is the first one it generates: no early stop, 8 new tokens"):
        lambda: _eos_case(),
    _("the course model, 'The cat sat on the', 4 new tokens"): lambda: (course_model()[0], course_ids(CAT_PROMPT)[None], 4),
}
NEAR_TIE = 1e-5  # a generated token whose logit is this close to the top one is an acceptable argmax


def _eos_case():
    """A copy of a tiny Llama whose eos_token_id is the first token greedy decoding produces after the prompt."""
    import copy

    model = copy.deepcopy(cached_tiny_model("llama", 0))
    ids = random_ids(128, (1, 6), 54)
    with torch.no_grad():
        first = int(model(ids).logits[0, -1].argmax())
    model.generation_config.eos_token_id = model.config.eos_token_id = first
    return model, ids, 8


@per_input
def _reference_generate(model, ids: torch.Tensor, n: int) -> torch.Tensor:
    if n == 0:
        return ids.clone()
    eos = (model.generation_config.eos_token_id, model.config.eos_token_id)
    model.generation_config.eos_token_id = model.config.eos_token_id = None  # the exercise never stops early
    try:
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=n,
                                 pad_token_id=eos[0] if isinstance(eos[0], int) else 0)
    finally:
        model.generation_config.eos_token_id, model.config.eos_token_id = eos
    if out.shape[1] != ids.shape[1] + n:
        raise RuntimeError(f"internal: generate stopped early on this case ({out.shape[1] - ids.shape[1]} of {n})")
    return out


@per_input
def _greedy_wrong(model, ids, n, position: int, last_only: bool = False) -> torch.Tensor:
    with torch.no_grad():
        for _step in range(n):
            seen = ids[:, -1:] if last_only else ids
            ids = torch.cat([ids, model(seen).logits[:, position].argmax(-1, keepdim=True)], -1)
    return ids


def _greedy_up_to_ties(model, ids: torch.Tensor, out, n: int) -> bool:
    """True if `out` is the prompt followed by n tokens, each within NEAR_TIE of the top logit at its step.

    One forward pass over `out` gives the logits after every prefix. generate (with a KV cache) and a loop
    that reruns the whole sequence round differently, so where two logits are nearly equal either token is
    a correct greedy choice."""
    if (not isinstance(out, torch.Tensor) or out.dtype != ids.dtype or out.shape != (ids.shape[0], ids.shape[1] + n)
            or not torch.equal(out[:, :ids.shape[1]], ids) or n == 0):
        return False
    if bool((out < 0).any()) or bool((out >= model.config.vocab_size).any()):
        return False
    with torch.no_grad():
        logits = model(out[:, :-1]).logits[:, ids.shape[1] - 1:].double()
    chosen = logits.gather(-1, out[:, ids.shape[1]:, None])[..., 0]
    return bool((chosen >= logits.amax(-1) - NEAR_TIE).all())


ALIAS = _("you returned `input_ids` itself (or a view of it): with max_new_tokens = 0 the loop never runs, and the "
          "caller's prompt and your result become one tensor. Return a new tensor: start from input_ids.clone(), or "
          "clone before returning.")


def _check_greedy(result, inputs):
    if not (isinstance(result, dict) and set(result) == {"ids", "alias"}):
        raise CheckFailed(_("internal: unexpected result format"))
    _check_ids(result["ids"], inputs)
    if result["alias"]:
        raise CheckFailed(_("Right tokens, but your result is the `input_ids` tensor you were given (it shares its "
                            "memory)."), ALIAS)


def _check_ids(out, inputs):
    model, ids, n = inputs
    expected = _reference_generate(model, ids, n)
    if not (isinstance(out, torch.Tensor) and torch.equal(out, expected)) and _greedy_up_to_ties(model, ids, out, n):
        return
    expect_tensor(out, expected, _("prompt + generated ids"), atol=0, rtol=0, mistakes=[
        (_("you returned only the new tokens; return the prompt followed by them, [B, T + max_new_tokens]."),
         lambda: expected[:, ids.shape[1]:]),
        (_("you dropped the batch dimension; keep [B, T + max_new_tokens]."), lambda: expected[0]),
        (_("you predicted from the first position (logits[:, 0]); the next token comes from the LAST position, "
           "logits[:, -1]."), lambda: _greedy_wrong(model, ids, n, 0)),
        (_("you fed the model only the last token at each step, as if it kept a cache: without past_key_values it "
           "sees no context. Give it the whole sequence so far (or pass past_key_values back in)."),
         lambda: _greedy_wrong(model, ids, n, -1, last_only=True)),
        (_("you stopped at the end-of-sequence token: this loop always adds exactly max_new_tokens tokens, like "
           "generate(..., max_new_tokens=n) with no eos_token_id (stopping is a separate feature)."),
         lambda: _stopped_at_eos(model, ids, expected)),
        (_("max_new_tokens counts the NEW tokens, not the total length: the result has T + max_new_tokens columns."),
         lambda: expected[:, :max(n, ids.shape[1])] if n > ids.shape[1] else None),
    ])


def _stopped_at_eos(model, ids: torch.Tensor, expected: torch.Tensor):
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    new = expected[:, ids.shape[1]:]
    for i in range(new.shape[1]):
        if all(int(t) in eos for t in new[:, i]):
            return expected[:, :ids.shape[1] + i + 1]
    return None
