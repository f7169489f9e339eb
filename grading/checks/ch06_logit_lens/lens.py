"""Chapter 06: logit_lens, target_rank_by_layer and kl_to_final against the judge's own lens."""
from __future__ import annotations

import copy

import math

import torch
from torch.distributions import Categorical, kl_divergence

from ...i18n import N_, _, verbatim
from ..compare import CheckFailed, expect_tensor, expect_that
from ..fixtures import course_model, random_ids, random_tensor
from ..memo import Later, evaluated, per_input
from .common import FRANCE, course_lens_france, judge_lens, reference_lens, tiny_lens_model


# ---------------------------------------------------------------- logit_lens


def _tiny_case(arch, seed, layers=3, tied=True, tokens=6):
    def make():
        model = tiny_lens_model(arch, seed, num_layers=layers, tied=tied)
        return model, random_ids(model.config.vocab_size, (1, tokens), seed)
    return make


def _small_eps_case():
    """A tiny llama whose norms have eps = 0.01 and whose states are small (embeddings scaled by 0.1), so the
    epsilon visibly changes the normed states (with unit-scale states, or the course model's 1e-5, it does not).
    Every norm gets it, as config.rms_norm_eps does: the learner's process rebuilds the model from its config."""
    model = tiny_lens_model("llama", 7)
    model.config.rms_norm_eps = 1e-2
    for module in model.modules():
        if hasattr(module, "variance_epsilon"):
            module.variance_epsilon = 1e-2
    with torch.no_grad():
        model.get_input_embeddings().weight.mul_(0.1)
    return model, random_ids(model.config.vocab_size, (1, 6), 7)


def _bfloat16_case():
    """A tiny llama converted to bfloat16: the lens is still float32 (the docstring's dtype)."""
    model = tiny_lens_model("llama", 8).to(torch.bfloat16)
    return model, random_ids(model.config.vocab_size, (1, 6), 8)


def _course_case():
    model, tok = course_model()
    return model, tok(FRANCE, return_tensors="pt").input_ids


LENS_INPUTS = {
    _("tiny random llama, 3 blocks, 6 tokens (final norm: model.norm)"): _tiny_case("llama", 1),
    _("tiny random qwen3, 4 blocks, 5 tokens (final norm: model.norm)"): _tiny_case("qwen3", 2, layers=4, tokens=5),
    _("tiny random gpt2, 3 blocks (final norm: transformer.ln_f, a LayerNorm with bias)"): _tiny_case("gpt2", 3),
    _("tiny random llama with an UNTIED head (lm_head is not the embedding)"): _tiny_case("llama", 4, tied=False),
    _("a one-token prompt (T = 1), tiny gpt2, 2 blocks"): _tiny_case("gpt2", 5, layers=2, tokens=1),
    _("tiny qwen3 with a single block (2 rows)"): _tiny_case("qwen3", 6, layers=1, tokens=4),
    _("the course model, {prompt}", prompt=verbatim(repr(FRANCE))): _course_case,
    _("tiny llama whose norms have eps = 0.01, with small states (read the final norm's own epsilon)"): _small_eps_case,
    _("tiny llama in bfloat16: the lens is float32 all the same"): _bfloat16_case,
}


def _lens_mistakes(model, ids, expected, j):
    head, norm, raw, final = j["head"], j["norm"], j["raw"], j["logits"]

    def skipped():  # every row but the last taken straight from the raw states
        return torch.cat([head(raw[:-1]), final[None]]).log_softmax(-1)

    def twice():
        return torch.cat([j["lens_logits"][:-1], head(norm(norm(raw[-1])))[None]]).log_softmax(-1)

    yield (_("final norm skipped: the intermediate states went straight into the LM head. A block's output "
             "must pass through the model's final norm (model.base_model.norm or .ln_f) before the head; "
             "see 'The lens on the real model' in notebook 06a."), skipped)
    yield (_("final norm skipped on every row, including the raw output of the last block."),
           lambda: head(raw).log_softmax(-1))
    yield (_("final norm applied twice to the last state: the last row no longer matches the model's own "
             "logits. Check which entries of output_hidden_states still need the final norm: reread "
             "'What output_hidden_states returns' in notebook 06a."), twice)
    yield (_("final norm applied twice to the last state, and skipped on the others: the norm went on the wrong "
             "rows."), lambda: torch.cat([head(raw[:-1]), head(norm(norm(raw[-1])))[None]]).log_softmax(-1))
    yield (_("you returned probabilities; the exercise asks for log-probabilities (log_softmax)."),
           lambda: expected.exp())
    yield (_("you returned logits; apply log_softmax over the vocabulary."),
           lambda: torch.cat([j["lens_logits"][:-1], final[None]]))
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    if eps is not None and eps != 1e-5:
        def hard_coded_eps():
            x = raw[:-1]
            if getattr(norm, "bias", None) is not None:
                normed = torch.nn.functional.layer_norm(x, x.shape[-1:], norm.weight, norm.bias, 1e-5)
            else:
                normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * norm.weight
            return torch.cat([head(normed), final[None]]).log_softmax(-1)

        yield (_("you hard-coded the norm's epsilon (1e-5): this model's final norm uses {eps:g}. Call the model's "
                 "own final norm module, or read its epsilon (variance_epsilon for RMSNorm, eps for LayerNorm).",
                 eps=eps), hard_coded_eps)
    yield (_("the embedding row is missing: hidden_states[0] (before any block) is layer 0 of the lens."),
           lambda: expected[1:])
    yield (_("one row short at the end: the lens has num_layers + 1 rows, the last from the final state."),
           lambda: expected[:-1])
    if model.get_output_embeddings().weight is not model.get_input_embeddings().weight:
        E = model.get_input_embeddings().weight
        yield (_("you used the input embedding as the head; this model is untied: use "
                 "model.get_output_embeddings() (or model.lm_head)."), lambda: (j["normed"] @ E.T).log_softmax(-1))
    if ids.shape[-1] > 1:
        def first_position():
            first = judge_lens(model, ids, position=0)
            return torch.cat([first["lens_logits"][:-1], first["logits"][None]]).log_softmax(-1)

        yield _("you took the first position; the lens reads the LAST position ([:, -1])."), first_position


MODEL_DTYPE = N_("returned the model's dtype, not float32: the docstring asks for float32 log-probabilities "
                 "whatever the model's dtype ({dtype} here). Cast the logits with .float() before log_softmax.")


@per_input
def _float32(model):
    """The model itself if float32, else the same weights in float32 (the reference, to bfloat16's tolerance)."""
    return copy.deepcopy(model).float() if model.dtype != torch.float32 else model


@per_input
def _lens_reference(model, ids: torch.Tensor) -> tuple[dict, torch.Tensor]:
    ref = _float32(model)
    j = judge_lens(ref, ids)
    return j, reference_lens(ref, ids, j)


@per_input
def _lens_wrong(model, ids: torch.Tensor) -> list:
    """The known mistakes with their wrong lenses on (model, ids)."""
    j, expected = _lens_reference(model, ids)
    return evaluated(_lens_mistakes(_float32(model), ids, expected, j))


@per_input
def _lens_wrong_last_rows(model, ids: torch.Tensor) -> list:
    """The same mistakes' last rows (the final prediction)."""
    return evaluated((m, (lambda w=w: w[-1])) for m, w in _lens_wrong(model, ids))


def _check_lens(out, inputs):
    model, ids = inputs
    low = model.dtype != torch.float32
    j, expected = _lens_reference(model, ids)
    mistakes = Later(_lens_wrong, model, ids)
    n = model.config.num_hidden_layers
    atol, rtol = (0.1, 0.03) if low else (1e-4, 1e-4)  # bfloat16 keeps 8 bits: 4 of its epsilons, relative
    if isinstance(out, torch.Tensor) and out.shape == expected.shape:
        own = j["logits"].log_softmax(-1)  # the model's own final prediction
        expect_tensor(out[-1], own, _("last row (must equal log_softmax(model(input_ids).logits[0, -1]), "
                                      "the model's own prediction)"), atol=atol, rtol=rtol, check_dtype=False,
                      mistakes=Later(_lens_wrong_last_rows, model, ids))
    expect_tensor(out, expected, _("lens [num_layers + 1 = {rows}, V = {vocab}]", rows=n + 1, vocab=expected.shape[1]),
                  atol=atol, rtol=rtol, check_dtype=not low, mistakes=mistakes)
    if low and out.dtype == model.dtype:
        raise CheckFailed(_(MODEL_DTYPE, dtype=verbatim(model.dtype)))
    finite = out[torch.isfinite(out)] if isinstance(out, torch.Tensor) and out.is_floating_point() else None
    if low and finite is not None and finite.numel() and bool((finite.to(model.dtype).float() == finite).all()):
        # float32 log-probabilities of low-precision logits are almost never all exactly low-precision numbers
        raise CheckFailed(_("float32 values, but every one is exactly a {dtype} number: you took log_softmax in the "
                            "model's dtype, then cast (bfloat16 keeps 8 bits, so each log-probability carries that "
                            "rounding). Cast the logits with .float() before log_softmax.",
                            dtype=verbatim(model.dtype)))
    expect_that(out.dtype == torch.float32, _("expected dtype torch.float32, got {dtype}.", dtype=verbatim(out.dtype)))


# ---------------------------------------------------------------- target_rank_by_layer


def _random_lens(layers, vocab, seed, scale=2.0, dtype=torch.float32):
    """A [layers, vocab] lens: log_softmax of random logits (computed in float64, then cast)."""
    return random_tensor((layers, vocab), seed, scale, torch.float64).log_softmax(-1).to(dtype)


def _top_everywhere():
    lens = _random_lens(4, 25, 21)
    lens[:, 7] = 1.0  # larger than every log-probability
    return lens.log_softmax(-1), 7


def _bottom_and_last():
    lens = _random_lens(3, 40, 22)
    lens[1, 39] = -100.0
    return lens, 39


def _with_uniform_layer():
    lens = _random_lens(4, 16, 23)
    lens[0] = -torch.log(torch.tensor(16.0))  # a layer with no opinion: every token tied
    return lens, 5


RANK_INPUTS = {
    _("random lens [5, 20], target 3"): lambda: (_random_lens(5, 20, 20), 3),
    _("target is the top token at every layer (all ranks 0)"): _top_everywhere,
    _("target id V - 1, the least likely token at layer 1 (rank V - 1)"): _bottom_and_last,
    _("a uniform layer: all tokens tied, so the rank is 0 (count strictly larger values)"): _with_uniform_layer,
    _("a single layer [1, 50], target 0"): lambda: (_random_lens(1, 50, 24), 0),
    _("float64 lens [3, 30]"): lambda: (_random_lens(3, 30, 25, dtype=torch.float64), 12),
    _("the course model's lens on {prompt}, target ' Paris'", prompt=verbatim(repr(FRANCE))): course_lens_france,
}


def _reference_ranks(lens: torch.Tensor, target: int) -> torch.Tensor:
    from scipy.stats import rankdata  # imported here: it takes a second, and only the judge needs it

    # scipy ranks -lens with ties sharing the smallest rank; 1-based, so subtract 1
    ranks = [int(rankdata(-row, method="min")[target]) - 1 for row in lens.double().numpy()]
    return torch.tensor(ranks, dtype=torch.long)


def _check_rank(out, inputs):
    lens, target = inputs
    expected = _reference_ranks(lens, target)
    t = lens[:, target:target + 1]
    stable = torch.argsort(lens, dim=-1, descending=True, stable=True)
    sorted_position = (stable == target).nonzero()[:, 1]
    mistakes = [
        (_("your ranks start at 1; rank 0 means the target is the top token."), lambda: expected + 1),
        (_("you took argsort(...)[:, target_id]: that is the id of the token AT rank target_id. You need the rank "
           "OF target_id: the number of tokens with a larger value."), lambda: stable[:, target]),
        (_("you counted from the bottom (smaller values); rank 0 is the most likely token."),
         lambda: (lens < t).sum(-1)),
        (_("you returned the top token id per layer (argmax), not the target's rank."), lambda: lens.argmax(-1)),
        (_("you counted values >= the target's, which includes the target itself."), lambda: (lens >= t).sum(-1)),
    ]
    if not torch.equal(sorted_position, expected):  # only where ties make the two differ
        mistakes.append((_("ties: you used the position in a sorted order; the rank counts only strictly larger "
                           "values, so tied tokens share the better rank."), sorted_position))
    what = _("rank of token {target} per layer", target=target)
    if isinstance(out, torch.Tensor) and out.dtype != torch.long:
        expect_tensor(out, expected.to(out.dtype), what, atol=0, rtol=0, check_dtype=False, mistakes=mistakes)
        raise CheckFailed(_("{what}: the values are right, but the dtype is {dtype}. A rank is a count: return "
                            "a LongTensor (int64), e.g. the .sum() of a bool tensor, or .long().",
                            what=what, dtype=verbatim(out.dtype)))
    expect_tensor(out, expected, what, atol=0, rtol=0, mistakes=mistakes)


# ---------------------------------------------------------------- kl_to_final


def _uniform_vs_peaked():
    final = (torch.arange(10.0) * -1.5).log_softmax(-1)
    uniform = torch.full((10,), -torch.log(torch.tensor(10.0)).item())
    return (torch.stack([uniform, _random_lens(1, 10, 31)[0], final]),)


KL_INPUTS = {
    _("random lens [6, 30]"): lambda: (_random_lens(6, 30, 30),),
    _("a uniform layer against a peaked final distribution (KL = log V - entropy)"): _uniform_vs_peaked,
    _("identical layers: all zero"): lambda: (_random_lens(1, 12, 32).repeat(4, 1),),
    _("a single layer: [0.]"): lambda: (_random_lens(1, 8, 33),),
    _("float64 lens keeps float64"): lambda: (_random_lens(4, 20, 34, dtype=torch.float64),),
    _("sharp distributions (scale 8), where the direction of KL matters"): lambda: (
        _random_lens(5, 15, 35, scale=8.0),),
    _("a layer rules out a token the final row keeps: inf"): lambda: (
        torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.25, 0.0], [0.25, 0.25, 0.5]]).log(),),
    _("the final row's probability underflows to 0 (log-probability -800) where a layer has -inf: adds 0, not NaN"):
        lambda: (torch.tensor([[0.0, -3.0, -math.inf], [-0.5, -1.0, -800.0], [-0.1, -2.4, -800.0]])
                 .log_softmax(-1),),
    _("the course model's lens on {prompt}", prompt=verbatim(repr(FRANCE))): lambda: (course_lens_france()[0],),
}


EPSILON = _("you added a small epsilon to the probabilities before the log (log(p + eps)): the reference adds none. "
            "It changes every term where a probability is small, and turns the inf of a token a layer rules out "
            "into a finite number. Work with the log-probabilities you are given: P * (log P - log Q).")


def _last_zero(kl: torch.Tensor) -> torch.Tensor:
    kl[-1] = 0.0
    return kl


def _kl_plus_eps(lens: torch.Tensor, eps: float) -> torch.Tensor:
    P, Q = lens[-1].exp(), lens.exp()
    return (P * (torch.log(P + eps) - torch.log(Q + eps))).sum(-1)


def kl_reference(lens: torch.Tensor) -> torch.Tensor:
    """KL(final || layer) per row in float64, cast to lens's dtype: torch.distributions' categorical KL, except
    where a layer's probability underflows to 0 for a finite log-probability (there it says inf; the sum of
    P (log P - log Q) does not), and a token the final distribution rules out (-inf) adds 0."""
    lens64 = lens.double()
    final = Categorical(logits=lens64[-1].expand_as(lens64))
    expected = kl_divergence(final, Categorical(logits=lens64))
    last = lens64[-1]
    direct = torch.where(torch.isneginf(last), 0.0, last.exp() * (last - lens64)).sum(-1)
    underflow = ((lens64.exp() == 0) & ~torch.isneginf(lens64) & ~torch.isneginf(last)).any(-1)
    expected = torch.where(underflow, direct, expected).to(lens.dtype)
    expected[-1] = 0  # exactly, not a rounding error
    return expected


def _check_kl(out, inputs):
    (lens,) = inputs
    L = lens.shape[0]
    expected = kl_reference(lens)
    p = lens[-1].exp()
    reverse = (lens.exp() * (lens - lens[-1])).sum(-1)
    expect_tensor(out, expected, _("KL(final || layer) per layer"), atol=1e-5, rtol=1e-4, mistakes=[
        (_("you computed KL(layer || final), the other direction: weight by the FINAL distribution, "
           "sum p_final * (log p_final - log p_layer). With F.kl_div(input, target), input is the layer's "
           "log-probabilities and target the final's."), reverse),
        (_("you averaged over the vocabulary (reduction='mean' divides by V); KL sums over tokens."),
         lambda: (p * (lens[-1] - lens)).sum(-1) / lens.shape[1]),
        (_("you weighted by the final LOG-probabilities; the weights are probabilities: exp() them."),
         lambda: (lens[-1] * (lens[-1] - lens)).sum(-1)),
        (_("you reduced over the layers as well; return one KL per layer, shape [num_layers + 1]."),
         lambda: (p * (lens[-1] - lens)).sum() / L),
        (_("you reduced over the layers as well (reduction='batchmean' or a total sum); return one value per "
           "layer."), lambda: (p * (lens[-1] - lens)).sum()),
        (_("F.kl_div(input, target) reads target as PROBABILITIES unless log_target=True: you passed "
           "log-probabilities, so it took the log of negative numbers (NaN). Use F.kl_div(lens, final, "
           "log_target=True, reduction='none'), its terms set to 0 where the final row is -inf, then .sum(-1); or "
           "write the sum yourself."),
         lambda: torch.nn.functional.kl_div(lens, lens[-1].expand_as(lens), reduction="none").sum(-1)),
        (_("the final distribution rules a token out (log-probability -inf): there P * (log P - log Q) is "
           "0 * (-inf) = NaN, yet the term is 0 (0 log 0 = 0). Drop those tokens from the sum (torch.where on "
           "torch.isneginf of the final row)."), lambda: _last_zero((p * (lens[-1] - lens)).sum(-1))),
        (_("you dropped only the tokens whose final log-probability is -inf: one so low that its exp is 0 (here "
           "-800), against a layer's -inf, gives 0 * inf = NaN, yet the term is 0. Drop the tokens whose final "
           "PROBABILITY is 0 (torch.where(p == 0, 0, ...))."),
         lambda: _last_zero(torch.where(torch.isneginf(lens[-1]), 0.0, p * (lens[-1] - lens)).sum(-1))),
    ] + ([(EPSILON, lambda eps=eps: _kl_plus_eps(lens, eps)) for eps in (1e-12, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6)]
         if lens.dtype == torch.float64 or bool(torch.isneginf(lens[:-1]).any()) else []))
    expect_that(float(out[-1]) == 0.0, _("KL of the final layer with itself must be exactly 0."))
