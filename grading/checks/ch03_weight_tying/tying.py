"""Chapter 03: tie_weights observed in the learner's process, and the stretch untie_lm_head."""
from __future__ import annotations

import copy

import torch
from torch import nn

from ...worker.calls.ch03 import same_storage as _same_storage, sgd_step_through_head as _sgd_step_through_head
from ..compare import CheckFailed, expect_tensor, expect_that, matches
from ..fixtures import cached_tiny_model, random_ids, random_table
from ...i18n import _, verbatim


# ---------------------------------------------------------------- tie_weights

def _built(make, seed: int = 0):
    """`make()` run with torch's global generator seeded, then restored (module constructors draw from it)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return make()


def _pair(V: int, d: int, seed: int, *, bias: bool = False, padding_idx: int | None = None,
          dtype: torch.dtype = torch.float32):
    """An embedding and a head with different, deterministic values, plus hidden states and targets."""
    emb, head = _built(lambda: (nn.Embedding(V, d, padding_idx=padding_idx, dtype=dtype),
                                nn.Linear(d, V, bias=bias, dtype=dtype)))
    with torch.no_grad():
        emb.weight.copy_(random_table(V, d, seed, dtype))
        head.weight.copy_(random_table(V, d, seed + 1000, dtype) * 0.1)
        if bias:
            head.bias.copy_(random_table(1, V, seed + 2000, dtype)[0] * 0.1)
    x = random_table(6, d, seed + 3000, dtype)  # hidden vectors that go through the head only
    targets = random_ids(V, (6,), seed + 4000)
    return emb, head, x, targets


def _tiny_llama_pair():
    # The cached model is shared: every case works on a deep copy of these inputs, so it is never tied.
    model = cached_tiny_model("llama", seed=5, vocab_size=96, hidden_size=16, num_layers=1, tied=False)
    _, _, x, targets = _pair(96, 16, 6)
    return model.get_input_embeddings(), model.get_output_embeddings(), x, targets


TIE_INPUTS = {
    _("V=10, d=4"): lambda: _pair(10, 4, 1),
    _("V=50, d=8, a head with a bias (the bias stays the head's own)"): lambda: _pair(50, 8, 2, bias=True),
    _("V=1: a one-token vocabulary"): lambda: _pair(1, 3, 3),
    _("an embedding with padding_idx=0"): lambda: _pair(20, 6, 4, padding_idx=0),
    _("float64 modules"): lambda: _pair(12, 5, 7, dtype=torch.float64),
    _("a tiny untied transformers Llama: model.model.embed_tokens and model.lm_head"): _tiny_llama_pair,
}


def _check_tying(obs, inputs):
    if not isinstance(obs, dict):
        raise CheckFailed(_("internal: unexpected result format"))
    emb, head, x, targets = copy.deepcopy(inputs)  # the judge reuses inputs: never tie the cached ones
    E0, H0 = emb.weight.detach().clone(), head.weight.detach().clone()
    V, d = E0.shape
    expect_that(obs["is_tensor"], _("After tie_weights, head.weight is not a tensor at all. Assign the embedding's "
                                    "Parameter to it."))
    had = sorted(name for name, _ in head.named_parameters())
    added = sorted(set(obs.get("head_parameters", had)) - set(had))
    expect_that(not added, _("After tie_weights the head has parameter(s) {added} it did not have before (it had "
                             "{had}). Tying replaces head.weight and nothing else: leave a head without a bias "
                             "without one (a zero bias still trains and changes the logits).",
                             added=verbatim(added), had=verbatim(had)))
    if obs["head_shape"] != (V, d):
        transposed = _(" It looks transposed: nn.Linear(d, V) stores its weight as [V, d] already, the same "
                       "shape as the embedding, so no .T is needed.") if obs["head_shape"] == (d, V) else ""
        raise CheckFailed(_("head.weight has shape {shape}, expected [{V}, {d}].{transposed}",
                            shape=list(obs['head_shape']), V=V, d=d, transposed=transposed))
    if matches(obs["embedding_after_tie"], H0, atol=0, rtol=0) and not torch.equal(E0, H0):
        raise CheckFailed(_("The embedding lost its values: after tying, embedding.weight holds the head's old "
                            "weights. You tied the wrong way round (embedding.weight = head.weight); the head "
                            "should take the embedding's parameter."))
    expect_tensor(obs["embedding_after_tie"], E0, _("embedding.weight right after tying (it should be unchanged)"),
                  atol=0, rtol=0)
    expect_tensor(obs["head_after_tie"], E0, _("head.weight right after tying (it should equal the embedding)"),
                  atol=0, rtol=0)
    expect_that(obs.get("embedding_kept", True),
                _("After tie_weights, embedding.weight is no longer the embedding's own Parameter: you rebound it to a "
                  "new Parameter (a copy). Optimisers and other modules hold the original object, which no longer "
                  "reaches the model. Keep embedding.weight as it is and give the head that same object: "
                  "head.weight = embedding.weight."))

    # The judge's own tied pair, after the same optimiser step.
    head.weight = emb.weight
    _sgd_step_through_head(emb, head, x, targets)
    expected = emb.weight.detach()
    emb_moved = float((obs["embedding_after_step"] - E0).abs().max())
    head_moved = float((obs["head_after_step"] - E0).abs().max())
    if not (obs["same_storage"] and _same_storage(*obs["pair"])):
        raise CheckFailed(_(
            "Copied instead of shared: head.weight has the embedding's values but lives in its own memory "
            "(a different storage), so the two drift apart as soon as one is trained. Measured: after one SGD "
            "step on a loss computed from the head's logits only, the head moved by up to {head_moved:.3g} and the "
            "embedding by {emb_moved:.3g}. Assign the Parameter itself (head.weight = embedding.weight), not a clone "
            "or a copy_ of its data.", head_moved=head_moved, emb_moved=emb_moved))
    if not obs["same_object"]:
        raise CheckFailed(_(
            "head.weight shares the embedding's memory but is a different Parameter object (for example "
            "nn.Parameter(embedding.weight) or head.weight.data = embedding.weight.data). The module now has "
            "{n} parameters where a tied pair has {tied}: "
            "parameters() counts the matrix twice, an optimiser keeps two states for it, and the head's gradient "
            "goes to a different tensor than the embedding's. Assign the Parameter itself: "
            "head.weight = embedding.weight.", n=obs['n_parameters'], tied=2 if head.bias is not None else 1))
    expect_tensor(obs["embedding_after_step"], expected, _("embedding.weight after one SGD step through the head"),
                  atol=1e-6, rtol=1e-5, mistakes=[(_("copied instead of shared: the embedding did not move."), E0)])
    expect_tensor(obs["head_after_step"], expected, _("head.weight after the same step"), atol=1e-6, rtol=1e-5)
    if head.bias is not None:
        expect_tensor(obs["bias_after_step"], head.bias.detach(), _("head.bias after the step (it stays the "
                      "head's own parameter)"), atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------- the chapter

# ---------------------------------------------------------------- stretch: untie_lm_head


def _untie_case(arch: str, seed: int, tied: bool = True, vocab_size: int = 128,
                dtype: torch.dtype = torch.float32) -> tuple:
    """(a tiny model, hidden states x [4, d], targets [4]) for the SGD step through the reloaded head."""
    model = cached_tiny_model(arch, seed, tied=tied, vocab_size=vocab_size)
    if dtype != torch.float32:
        model = copy.deepcopy(model).to(dtype)  # the cached model is shared: convert a copy
    d = model.get_input_embeddings().weight.shape[1]
    return model, random_table(4, d, seed + 300, dtype), random_ids(vocab_size, (4,), seed + 301)


UNTIE_INPUTS = {
    _("a tied tiny Llama (V = 128, d = 32)"): lambda: _untie_case("llama", 20),
    _("a tied tiny Qwen3"): lambda: _untie_case("qwen3", 21),
    _("a tied tiny GPT-2 (lm_head tied to transformer.wte)"): lambda: _untie_case("gpt2", 22),
    _("a tied tiny Llama with V = 1000"): lambda: _untie_case("llama", 23, vocab_size=1000),
    _("an already untied tiny Llama: its head keeps its own values"): lambda: _untie_case("llama", 24, tied=False),
    _("a tied tiny Llama in bfloat16: the new head stays bfloat16"): lambda: _untie_case("llama", 25,
                                                                                        dtype=torch.bfloat16),
    _("a tiny Llama tied by storage: two Parameter objects on one matrix (the head is not the embedding's object)"):
        lambda: (*_untie_case("llama", 26), "by storage"),
}

_RELOAD = _("model.save_pretrained(folder) then AutoModelForCausalLM.from_pretrained(folder)")
_UNTIED = _("after untie_lm_head")  # the two stages the checks look at: right after the call, and after a reload
_RELOADED = _("after {reload}", reload=_RELOAD)


def _check_untie_stage(seen: dict, E: torch.Tensor, H: torch.Tensor, tied: bool, stage: str) -> None:
    if seen["same_storage"]:
        fix = (_("Setting config.tie_word_embeddings = False (or wrapping the same tensor in a new Parameter, "
                 "nn.Parameter(emb.weight)) does not copy anything: give the head "
                 "nn.Parameter(emb.weight.detach().clone()).") if stage == _UNTIED else
               _("config.tie_word_embeddings was still True when the model was saved, so from_pretrained tied them "
                 "again: set model.config.tie_word_embeddings = False."))
        raise CheckFailed(_("{stage}: the head and the embedding still share one storage. {fix}", stage=stage,
                            fix=fix))
    if seen["config_tied"]:
        raise CheckFailed(_("{stage}: config.tie_word_embeddings is True; the saved config must say False, or "
                            "from_pretrained (and model.tie_weights()) ties the head to the embedding again.",
                            stage=stage))
    if not (seen["is_parameter"] and seen["requires_grad"]):
        raise CheckFailed(_("{stage}: the head's weight is not a trainable nn.Parameter (is_parameter="
                            "{is_parameter}, requires_grad={requires_grad}): a head that does not "
                            "train is not a head of its own. Use nn.Parameter(...) with requires_grad left True.",
                            stage=stage, is_parameter=verbatim(seen['is_parameter']),
                            requires_grad=verbatim(seen['requires_grad'])))
    expect_tensor(seen["emb"], E, _("{stage}: the embedding matrix", stage=stage), atol=0, rtol=0)
    expect_tensor(seen["head"], H, _("{stage}: the head's weight (a copy of the shared matrix)", stage=stage),
                  atol=0, rtol=0, mistakes=[] if tied else [
                      (_("the model was already untied: its head has its own values, which must stay; you overwrote "
                         "them with the embedding's."), E)])


def _check_untie(out, inputs):
    model, x, targets = inputs[:3]
    had = out.get("before", {}).get("head_parameters")
    if had is not None:
        for stage, seen in ((_UNTIED, out["after"]), (_RELOADED, out["reloaded"])):
            added = sorted(set(seen.get("head_parameters", had)) - set(had))
            expect_that(not added, _("{stage}: the head has parameter(s) {added} it did not have before (it had "
                                     "{had}). Untying gives the head its own copy of the weight and nothing else: "
                                     "a new nn.Linear(d, V) has a bias by default (bias=True).",
                                     stage=stage, added=verbatim(added), had=verbatim(had)))
    E = model.get_input_embeddings().weight.detach().clone()
    H = model.get_output_embeddings().weight.detach().clone()
    tied = _same_storage(model.get_input_embeddings().weight, model.get_output_embeddings().weight)
    _check_untie_stage(out["after"], E, H, tied, _UNTIED)
    _check_untie_stage(out["reloaded"], E, H, tied, _RELOADED)
    emb = nn.Embedding.from_pretrained(E.clone(), freeze=False)
    head = nn.Linear(E.shape[1], E.shape[0], bias=False, dtype=H.dtype)
    with torch.no_grad():
        head.weight.copy_(H)
    _sgd_step_through_head(emb, head, x, targets)
    stepped = out.get("stepped")
    expect_that(stepped is not None, _("internal: the reloaded model's step was not taken."))
    expect_tensor(stepped["emb"], E, _("the reloaded embedding after one SGD step through the head only (it must not "
                  "change: the matrices are separate)"), atol=0, rtol=0)
    expect_tensor(stepped["head"], head.weight.detach(), _("the reloaded head after one SGD step through the head"),
                  atol=1e-6, rtol=1e-5)
