"""Chapter 06: the models the checks use and the judge's own logit lens."""
from __future__ import annotations

import copy
from functools import lru_cache

import torch

from ...i18n import _, verbatim
from ..compare import seeded
from ..fixtures import cached_tiny_model, course_model, token_id


FRANCE = "The capital of France is"


# ---------------------------------------------------------------- models and the judge's own lens


def blocks_and_final_norm(model):
    """(the list of blocks, the final norm) of a llama/qwen3 (`model.norm`) or gpt2 (`transformer.ln_f`) model."""
    base = model.base_model
    for blocks, norm in (("layers", "norm"), ("h", "ln_f")):
        if hasattr(base, blocks) and hasattr(base, norm):
            return getattr(base, blocks), getattr(base, norm)
    raise ValueError(_("Do not know where the blocks and the final norm of {model} are.",
                       model=verbatim(type(model).__name__)))


def tiny_lens_model(arch: str, seed: int, num_layers: int = 3, tied: bool = True, vocab_size: int = 96):
    """A tiny random model whose final norm has non-trivial gains (and bias), so norm(norm(x)) != norm(x).

    A freshly initialised norm has gain 1 and bias 0, and applying it twice changes almost
    nothing; a trained one does not. Embeddings get unit scale so the distributions are peaked.
    The changes go on a deep copy of the cached model, drawn from a seeded generator: deterministic,
    and the cached model stays as built.
    """
    model = copy.deepcopy(cached_tiny_model(arch, seed, vocab_size=vocab_size, hidden_size=32,
                                            num_layers=num_layers, tied=tied))
    g = seeded(1000 + seed)
    _, norm = blocks_and_final_norm(model)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.5 * torch.randn(norm.weight.shape, generator=g))
        if getattr(norm, "bias", None) is not None:
            norm.bias.copy_(0.3 * torch.randn(norm.bias.shape, generator=g))
        emb = model.get_input_embeddings().weight
        emb.copy_(torch.randn(emb.shape, generator=g))
        if not tied:
            head = model.get_output_embeddings().weight
            head.copy_(torch.randn(head.shape, generator=g))
    return model


def _first_tensor(x):
    return x[0] if isinstance(x, (tuple, list)) else x


@torch.no_grad()
def _residual_stream(model, input_ids: torch.Tensor) -> tuple[list[torch.Tensor], object]:
    """(the residual stream before block 1 and after every block, from forward hooks; the model's output)."""
    blocks, _ = blocks_and_final_norm(model)
    states = []

    def pre_hook(_module, args, kwargs):
        states.append(args[0] if args else kwargs["hidden_states"])

    hooks = [blocks[0].register_forward_pre_hook(pre_hook, with_kwargs=True)]
    hooks += [b.register_forward_hook(lambda _m, _a, out: states.append(_first_tensor(out))) for b in blocks]
    try:
        out = model(input_ids)
    finally:
        for h in hooks:
            h.remove()
    return states, out


@torch.no_grad()
def judge_lens(model, input_ids: torch.Tensor, position: int = -1) -> dict[str, torch.Tensor]:
    """The lens and its wrong variants at one position, from forward hooks (not output_hidden_states).

    raw[i]: the residual stream after i blocks (raw[0] is the input of the first block);
    normed[i] = final_norm(raw[i]); logits: the model's own final logits.
    """
    _, norm = blocks_and_final_norm(model)
    states, out = _residual_stream(model, input_ids)
    logits = out.logits[0, position].float()
    raw = torch.stack([s[0, position] for s in states]).float()  # [N + 1, d]
    head = model.get_output_embeddings()
    normed = norm(raw)
    lens_logits = head(normed)
    # The judge's own sanity check on its own inputs (learner code never touches them): if it fails,
    # the hooks missed a state or the model is not wired as assumed, which is a course bug.
    if not torch.allclose(lens_logits[-1], logits, atol=1e-3, rtol=1e-3):
        raise RuntimeError(_("course bug in the chapter 06 checks: final norm + head of the last block's output "
                             "differs from the model's own logits; please report it"))
    return {"raw": raw, "normed": normed, "lens_logits": lens_logits, "logits": logits,
            "head": head, "norm": norm}


def reference_lens(model, input_ids: torch.Tensor, j: dict | None = None) -> torch.Tensor:
    """Log-probabilities at the last position for every layer, [N + 1, V], last row from the model's logits."""
    j = j or judge_lens(model, input_ids)
    rows = torch.cat([j["lens_logits"][:-1], j["logits"][None]])
    return rows.log_softmax(-1)


@lru_cache(maxsize=1)
def course_lens_france() -> tuple[torch.Tensor, int]:
    """The course model's lens on 'The capital of France is' and the id of ' Paris'."""
    model, tok = course_model()
    ids = tok(FRANCE, return_tensors="pt").input_ids
    return reference_lens(model, ids), token_id(" Paris")


# ---------------------------------------------------------------- the chapter
