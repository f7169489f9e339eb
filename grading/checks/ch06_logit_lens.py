"""Checks for chapter 06, the logit lens (exercises/ch06_logit_lens.py).

The judge's lens does not read `output_hidden_states`: it records each block's raw output
with forward hooks, applies the final norm and the LM head itself, and takes the last row
from the model's own logits. So a learner result that agrees with it agrees with the model.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import torch
from torch.distributions import Categorical, kl_divergence

from .compare import CheckFailed, expect_tensor, expect_that, seeded
from .fixtures import cached_tiny_model, course_model, random_ids, random_tensor, token_id
from ..model import Case, Chapter, Exercise, Question

FRANCE = "The capital of France is"
ARCHS = ("llama", "qwen3", "gpt2")

# ---------------------------------------------------------------- models and the judge's own lens


def blocks_and_final_norm(model):
    """(the list of blocks, the final norm) of a llama/qwen3 (`model.norm`) or gpt2 (`transformer.ln_f`) model."""
    base = model.base_model
    for blocks, norm in (("layers", "norm"), ("h", "ln_f")):
        if hasattr(base, blocks) and hasattr(base, norm):
            return getattr(base, blocks), getattr(base, norm)
    raise ValueError(f"Do not know where the blocks and the final norm of {type(model).__name__} are.")


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
        raise RuntimeError("course bug in the chapter 06 checks: final norm + head of the last block's output "
                           "differs from the model's own logits; please report it")
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


def _course_case():
    model, tok = course_model()
    return model, tok(FRANCE, return_tensors="pt").input_ids


LENS_INPUTS = {
    "tiny random llama, 3 blocks, 6 tokens (final norm: model.norm)": _tiny_case("llama", 1),
    "tiny random qwen3, 4 blocks, 5 tokens (final norm: model.norm)": _tiny_case("qwen3", 2, layers=4, tokens=5),
    "tiny random gpt2, 3 blocks (final norm: transformer.ln_f, a LayerNorm with bias)": _tiny_case("gpt2", 3),
    "tiny random llama with an UNTIED head (lm_head is not the embedding)": _tiny_case("llama", 4, tied=False),
    "a one-token prompt (T = 1), tiny gpt2, 2 blocks": _tiny_case("gpt2", 5, layers=2, tokens=1),
    "tiny qwen3 with a single block (2 rows)": _tiny_case("qwen3", 6, layers=1, tokens=4),
    f"the course model, {FRANCE!r}": _course_case,
    "tiny llama whose norms have eps = 0.01, with small states (read the final norm's own epsilon)": _small_eps_case,
}


def _lens_mistakes(model, ids, expected, j):
    head, norm, raw, final = j["head"], j["norm"], j["raw"], j["logits"]

    def skipped():  # every row but the last taken straight from the raw states
        return torch.cat([head(raw[:-1]), final[None]]).log_softmax(-1)

    def twice():
        return torch.cat([j["lens_logits"][:-1], head(norm(norm(raw[-1])))[None]]).log_softmax(-1)

    yield ("final norm skipped: the intermediate states went straight into the LM head. A block's output "
           "must pass through the model's final norm (model.base_model.norm or .ln_f) before the head; "
           "see 'The lens on the real model' in notebook 06.", skipped)
    yield ("final norm skipped on every row, including the raw output of the last block.",
           lambda: head(raw).log_softmax(-1))
    yield ("final norm applied twice to the last state: the last row no longer matches the model's own "
           "logits. Check which entries of output_hidden_states still need the final norm: reread "
           "'What output_hidden_states returns' in notebook 06.", twice)
    yield ("final norm applied twice to the last state, and skipped on the others: the norm went on the wrong rows.",
           lambda: torch.cat([head(raw[:-1]), head(norm(norm(raw[-1])))[None]]).log_softmax(-1))
    yield ("you returned probabilities; the exercise asks for log-probabilities (log_softmax).", lambda: expected.exp())
    yield ("you returned logits; apply log_softmax over the vocabulary.",
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

        yield (f"you hard-coded the norm's epsilon (1e-5): this model's final norm uses {eps:g}. Call the model's own "
               "final norm module, or read its epsilon (variance_epsilon for RMSNorm, eps for LayerNorm).",
               hard_coded_eps)
    yield ("the embedding row is missing: hidden_states[0] (before any block) is layer 0 of the lens.",
           lambda: expected[1:])
    yield ("one row short at the end: the lens has num_layers + 1 rows, the last from the final state.",
           lambda: expected[:-1])
    if model.get_output_embeddings().weight is not model.get_input_embeddings().weight:
        E = model.get_input_embeddings().weight
        yield ("you used the input embedding as the head; this model is untied: use model.get_output_embeddings() "
               "(or model.lm_head).", lambda: (j["normed"] @ E.T).log_softmax(-1))
    if ids.shape[-1] > 1:
        def first_position():
            first = judge_lens(model, ids, position=0)
            return torch.cat([first["lens_logits"][:-1], first["logits"][None]]).log_softmax(-1)

        yield "you took the first position; the lens reads the LAST position ([:, -1]).", first_position


def _check_lens(out, inputs):
    model, ids = inputs
    j = judge_lens(model, ids)
    expected = reference_lens(model, ids, j)
    mistakes = list(_lens_mistakes(model, ids, expected, j))
    n = model.config.num_hidden_layers
    if isinstance(out, torch.Tensor) and out.shape == expected.shape:
        own = j["logits"].log_softmax(-1)  # the model's own final prediction
        expect_tensor(out[-1], own, "last row (must equal log_softmax(model(input_ids).logits[0, -1]), "
                                    "the model's own prediction)", atol=1e-4, rtol=1e-4, check_dtype=False,
                      mistakes=[(m, (lambda w=w: (w() if callable(w) else w)[-1])) for m, w in mistakes])
    expect_tensor(out, expected, f"lens [num_layers + 1 = {n + 1}, V = {expected.shape[1]}]", atol=1e-4, rtol=1e-4,
                  mistakes=mistakes)


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
    "random lens [5, 20], target 3": lambda: (_random_lens(5, 20, 20), 3),
    "target is the top token at every layer (all ranks 0)": _top_everywhere,
    "target id V - 1, the least likely token at layer 1 (rank V - 1)": _bottom_and_last,
    "a uniform layer: all tokens tied, so the rank is 0 (count strictly larger values)": _with_uniform_layer,
    "a single layer [1, 50], target 0": lambda: (_random_lens(1, 50, 24), 0),
    "float64 lens [3, 30]": lambda: (_random_lens(3, 30, 25, dtype=torch.float64), 12),
    f"the course model's lens on {FRANCE!r}, target ' Paris'": course_lens_france,
}


def _reference_ranks(lens: torch.Tensor, target: int) -> torch.Tensor:
    from scipy.stats import rankdata  # imported here: it takes a second, and only the judge needs it

    # scipy ranks -lens with ties sharing the smallest rank; 1-based, so subtract 1
    return torch.tensor([int(rankdata(-row, method="min")[target]) - 1 for row in lens.double().numpy()])


def _check_rank(out, inputs):
    lens, target = inputs
    expected = _reference_ranks(lens, target)
    t = lens[:, target:target + 1]
    stable = torch.argsort(lens, dim=-1, descending=True, stable=True)
    sorted_position = (stable == target).nonzero()[:, 1]
    mistakes = [
        ("your ranks start at 1; rank 0 means the target is the top token.", lambda: expected + 1),
        ("you took argsort(...)[:, target_id]: that is the id of the token AT rank target_id. You need the rank "
         "OF target_id: the number of tokens with a larger value.", lambda: stable[:, target]),
        ("you counted from the bottom (smaller values); rank 0 is the most likely token.",
         lambda: (lens < t).sum(-1)),
        ("you returned the top token id per layer (argmax), not the target's rank.", lambda: lens.argmax(-1)),
        ("you counted values >= the target's, which includes the target itself.", lambda: (lens >= t).sum(-1)),
    ]
    if not torch.equal(sorted_position, expected):  # only where ties make the two differ
        mistakes.append(("ties: you used the position in a sorted order; the rank counts only strictly larger "
                         "values, so tied tokens share the better rank.", sorted_position))
    what = f"rank of token {target} per layer"
    if isinstance(out, torch.Tensor) and out.dtype != torch.long:
        expect_tensor(out, expected.to(out.dtype), what, atol=0, rtol=0, check_dtype=False, mistakes=mistakes)
        raise CheckFailed(f"{what}: the values are right, but the dtype is {out.dtype}. A rank is a count: return "
                          "a LongTensor (int64), e.g. the .sum() of a bool tensor, or .long().")
    expect_tensor(out, expected, what, atol=0, rtol=0, mistakes=mistakes)


# ---------------------------------------------------------------- kl_to_final


def _uniform_vs_peaked():
    final = (torch.arange(10.0) * -1.5).log_softmax(-1)
    uniform = torch.full((10,), -torch.log(torch.tensor(10.0)).item())
    return (torch.stack([uniform, _random_lens(1, 10, 31)[0], final]),)


KL_INPUTS = {
    "random lens [6, 30]": lambda: (_random_lens(6, 30, 30),),
    "a uniform layer against a peaked final distribution (KL = log V - entropy)": _uniform_vs_peaked,
    "identical layers: all zero": lambda: (_random_lens(1, 12, 32).repeat(4, 1),),
    "a single layer: [0.]": lambda: (_random_lens(1, 8, 33),),
    "float64 lens keeps float64": lambda: (_random_lens(4, 20, 34, dtype=torch.float64),),
    "sharp distributions (scale 8), where the direction of KL matters": lambda: (_random_lens(5, 15, 35, scale=8.0),),
    f"the course model's lens on {FRANCE!r}": lambda: (course_lens_france()[0],),
}


def _check_kl(out, inputs):
    (lens,) = inputs
    L = lens.shape[0]
    final = Categorical(logits=lens[-1].double().expand_as(lens))
    expected = kl_divergence(final, Categorical(logits=lens.double())).to(lens.dtype)
    expected[-1] = 0  # exactly, not a rounding error
    p = lens[-1].exp()
    reverse = (lens.exp() * (lens - lens[-1])).sum(-1)
    expect_tensor(out, expected, "KL(final || layer) per layer", atol=1e-5, rtol=1e-4, mistakes=[
        ("you computed KL(layer || final), the other direction: weight by the FINAL distribution, "
         "sum p_final * (log p_final - log p_layer). With F.kl_div(input, target), input is the layer's "
         "log-probabilities and target the final's.", reverse),
        ("you averaged over the vocabulary (reduction='mean' divides by V); KL sums over tokens.",
         lambda: (p * (lens[-1] - lens)).sum(-1) / lens.shape[1]),
        ("you weighted by the final LOG-probabilities; the weights are probabilities: exp() them.",
         lambda: (lens[-1] * (lens[-1] - lens)).sum(-1)),
        ("you reduced over the layers as well; return one KL per layer, shape [num_layers + 1].",
         lambda: (p * (lens[-1] - lens)).sum() / L),
        ("you reduced over the layers as well (reduction='batchmean' or a total sum); return one value per layer.",
         lambda: (p * (lens[-1] - lens)).sum()),
        ("F.kl_div(input, target) reads target as PROBABILITIES unless log_target=True: you passed log-probabilities, "
         "so it took the log of negative numbers (NaN). Use F.kl_div(lens, final, log_target=True, reduction='none')"
         ".sum(-1), or write the sum yourself.",
         lambda: torch.nn.functional.kl_div(lens, lens[-1].expand_as(lens), reduction="none").sum(-1)),
    ])
    expect_that(float(out[-1]) == 0.0, "KL of the final layer with itself must be exactly 0.")


# ---------------------------------------------------------------- the chapter

# ---------------------------------------------------------------- stretch: fit_tuned_lens


@torch.no_grad()
def _block_states(model, input_ids: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(residual stream after `layer` blocks, the last block's output (final norm's input)), every position but
    the first (the attention sink), flattened to rows [N, d]; from forward hooks, as judge_lens records them."""
    states, _ = _residual_stream(model, input_ids)
    rows = lambda s: s[:, 1:].reshape(-1, s.shape[-1]).float().clone()  # noqa: E731
    return rows(states[layer]), rows(states[-1])


def _affine_data(n: int, d_in: int, d_out: int, seed: int, noise: float = 0.1, mean: float = 1.0,
                 dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    X = random_tensor((n, d_in), seed, dtype=torch.float64) + random_tensor((d_in,), seed + 1, mean, torch.float64)
    A = random_tensor((d_in, d_out), seed + 2, dtype=torch.float64)
    Y = X @ A + random_tensor((d_out,), seed + 3, 2.0, torch.float64) + noise * random_tensor((n, d_out), seed + 4,
                                                                                          dtype=torch.float64)
    return X.to(dtype), Y.to(dtype)


def _tuned_tiny() -> tuple:
    model = tiny_lens_model("llama", 3, num_layers=3)
    return (*_block_states(model, random_ids(96, (8, 17), 98), 1), 0.0)


def _tuned_course() -> tuple:
    model, tok = course_model()
    texts = [FRANCE, "The cat sat on the mat and looked at the dog.", "One, two, three, four, five, six, seven",
             "In 1969 the first people walked on the Moon."]
    parts = [_block_states(model, tok(t, return_tensors="pt").input_ids, 10) for t in texts]
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts]), 1.0


TUNED_INPUTS = {
    "the docstring example: y = 2x + 1, ridge 0": lambda: (
        torch.tensor([[0.0], [1.0], [2.0], [3.0]]), torch.tensor([[1.0], [3.0], [5.0], [7.0]]), 0.0),
    "50 rows, d_in = 4 -> d_out = 3 with noise, ridge 0 (plain least squares)": lambda: (*_affine_data(50, 4, 3, 99), 0.0),
    "30 rows, 6 -> 6, ridge 0.5": lambda: (*_affine_data(30, 6, 6, 100, noise=0.5), 0.5),
    "fewer rows than dims (10 rows, 20 -> 20): only the ridge makes it unique, ridge 1.0": lambda: (
        *_affine_data(10, 20, 20, 101), 1.0),
    "a huge ridge (1e8): A ~ 0 and b ~ the mean of h_final (the bias is not penalised)": lambda: (
        *_affine_data(40, 5, 5, 102, mean=3.0), 1e8),
    "float32 states with a mean of size 300 and spread 1, 60 rows, 5 -> 5, ridge 1e-3 (returned as float32)":
        lambda: (*_affine_data(60, 5, 5, 103, mean=300.0, dtype=torch.float32), 1e-3),
    "a tiny Llama's states after block 1 -> its last block's output, 128 rows x 32, ridge 0": _tuned_tiny,
    "the course model: states after block 10 -> block 30's output, 4 prompts (about 40 rows x 576), ridge 1.0":
        _tuned_course,
}


def _ridge_reference(X: torch.Tensor, Y: torch.Tensor, ridge: float, penalise_bias: bool = False,
                     center: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Ridge regression by least squares on an augmented system (no normal equations), float64."""
    X, Y = X.double(), Y.double()
    n, d = X.shape
    if center and not penalise_bias:
        xm, ym = X.mean(0), Y.mean(0)
        rows = torch.cat([X - xm, ridge ** 0.5 * torch.eye(d, dtype=torch.float64)])
        target = torch.cat([Y - ym, torch.zeros(d, Y.shape[1], dtype=torch.float64)])
        A = torch.linalg.lstsq(rows, target, driver="gelsd").solution
        return A, ym - xm @ A
    ones = torch.ones(n, 1, dtype=torch.float64)
    Xa = torch.cat([X, ones], 1) if center else X
    k = Xa.shape[1]
    rows = torch.cat([Xa, ridge ** 0.5 * torch.eye(k, dtype=torch.float64)])
    target = torch.cat([Y, torch.zeros(k, Y.shape[1], dtype=torch.float64)])
    sol = torch.linalg.lstsq(rows, target, driver="gelsd").solution
    return (sol[:-1], sol[-1]) if center else (sol, torch.zeros(Y.shape[1], dtype=torch.float64))


def _check_tuned_lens(out, inputs):
    from .compare import expect_tuple

    X, Y, ridge = inputs
    A_ref, b_ref = _ridge_reference(X, Y, ridge)
    A, b = expect_tuple(out, 2, "fit_tuned_lens(h_layer, h_final, ridge) -> (A, b)")
    n = X.shape[0]
    X64, Y64 = X.double(), Y.double()
    low = X.dtype != torch.float64
    tol_a = (1e-4 if low else 1e-8) * max(1.0, float(A_ref.abs().max()))
    tol_b = (1e-4 if low else 1e-8) * max(1.0, float(b_ref.abs().max()), float((X64.mean(0) @ A_ref).abs().max()))

    def A_of(**kw):
        return _ridge_reference(X, Y, **kw)

    def float32_normal_equations():
        Xa = torch.cat([X.float(), torch.ones(n, 1)], 1)
        gram = Xa.T @ Xa + ridge * torch.diag(torch.tensor([1.0] * X.shape[1] + [0.0]))
        sol = torch.linalg.solve(gram, Xa.T @ Y.float())
        return sol[:-1], sol[-1]

    a_mistakes = [
        ("the ridge penalised the bias too (a column of ones inside the penalty): b is not penalised; centre X and "
         "h_final, solve for A, then b = mean(h_final) - mean(h_layer) @ A.",
         lambda: A_of(ridge=ridge, penalise_bias=True)[0].to(X.dtype)),
        ("no bias term: you fitted h_layer @ A alone (no centring, b = 0); the lens is affine, with a bias.",
         lambda: A_of(ridge=ridge, center=False)[0].to(X.dtype)),
        ("your A is transposed: the prediction is h_layer @ A + b, so A has shape [d_in, d_out] (the solution of "
         "(X^T X + ridge I) A = X^T Y), not its transpose.", lambda: A_ref.T.to(X.dtype)),
        ("the ridge term is missing (or not added to the diagonal of X^T X).",
         lambda: A_of(ridge=0.0)[0].to(X.dtype) if ridge > 0 and n > X.shape[1] else None),
        ("you scaled the ridge by the number of rows (a mean-squared-error objective): here the penalty is added to "
         "the SUM of squared errors, so X^T X + ridge * I.", lambda: A_of(ridge=ridge * n)[0].to(X.dtype)
         if ridge > 0 else None),
        ("you solved the normal equations in float32: with states far from 0, X^T X loses most of its digits. Centre "
         "first and compute in float64, then cast back.", lambda: float32_normal_equations()[0] if low else None),
    ]
    expect_tensor(A, A_ref.to(X.dtype), "A", atol=tol_a, rtol=0, mistakes=a_mistakes)
    expect_tensor(b, b_ref.to(X.dtype), "b", atol=tol_b, rtol=0, mistakes=[
        ("b = mean(h_final) - mean(h_layer): the bias must remove the mean of the PREDICTION, "
         "b = mean(h_final) - mean(h_layer) @ A.", lambda: (Y64.mean(0) - X64.mean(0)).to(X.dtype)
         if X.shape[1] == Y.shape[1] else None),
        ("b = mean(h_final): the bias must also remove the mean of h_layer @ A (b = mean(h_final) - mean(h_layer) @ A).",
         lambda: Y64.mean(0).to(X.dtype)),
    ])


CHAPTER = Chapter(
    number="06",
    module="ch06_logit_lens",
    title="The logit lens",
    exercises=[
        Exercise(
            "logit_lens", "final norm + LM head on every layer's state at the last position -> [N + 1, V] log-probs",
            [Case(n, m, _check_lens) for n, m in LENS_INPUTS.items()],
            hint="model(input_ids, output_hidden_states=True).hidden_states holds N + 1 tensors [1, T, d]. "
                 "Find the final norm on model.base_model (.norm for llama/qwen3, .ln_f for gpt2) and the head "
                 "with model.get_output_embeddings(). Before normalising every state, check whether each one "
                 "needs it: the lens's last row must equal log_softmax(model(...).logits[0, -1]).",
            timeout_s=120.0,
            uses_course_model=True,
        ),
        Exercise(
            "target_rank_by_layer", "rank of one token in every row of a lens (0 = top)",
            [Case(n, m, _check_rank) for n, m in RANK_INPUTS.items()],
            hint="The rank of the target in a row is how many tokens score strictly higher than it. "
                 "Compare the whole row with the target's column (keep the dimension) and count.",
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "kl_to_final", "KL(final || layer) for every layer of a lens, zero for the last",
            [Case(n, m, _check_kl) for n, m in KL_INPUTS.items()],
            hint="KL(P || Q) = sum_v P(v) * (log P(v) - log Q(v)) with P the final distribution (the last row, "
                 "exponentiated) and Q each layer's. Broadcasting the last row against all rows does it at once.",
            timeout_s=60.0,
            uses_course_model=True,
        ),
        Exercise(
            "fit_tuned_lens", "stretch: a per-layer affine lens by ridge regression in closed form -> (A, b)",
            [Case(n, m, _check_tuned_lens) for n, m in TUNED_INPUTS.items()],
            hint="In float64: centre both, Xc = X - X.mean(0) and Yc = Y - Y.mean(0) (the unpenalised bias drops out). "
                 "Then A = torch.linalg.solve(Xc.T @ Xc + ridge * I, Xc.T @ Yc) and b = Y.mean(0) - X.mean(0) @ A. "
                 "Cast both back to the input dtype.",
            uses_course_model=True,
        ),
    ],
    quiz=[
        Question(1, "A model with N transformer blocks, called with output_hidden_states=True, returns how many "
                    "hidden states?",
                 {"a": "N", "b": "N + 1", "c": "N - 1", "d": "2N, one after attention and one after the MLP"},
                 "040332a2ad158477b9d9",
                 "Reread 'What output_hidden_states returns' in notebook 06."),
        Question(2, "In transformers 5, the LAST entry of output_hidden_states is:",
                 {"a": "the raw output of the last block, before any norm",
                  "b": "the logits over the vocabulary",
                  "c": "the last block's output after the final norm",
                  "d": "the output of the embedding layer, before block 1"},
                 "b31a8b6a011075748663",
                 "Reread 'What output_hidden_states returns' and the forward hook in notebook 06."),
        Question(3, "The logit lens decodes an intermediate residual-stream state by:",
                 {"a": "applying the LM head to it directly, without any norm",
                  "b": "applying the final norm, then the LM head, to it",
                  "c": "running it through the blocks that remain after it",
                  "d": "taking its nearest embedding row by Euclidean distance"},
                 "f53e28566fe6b344ac3b",
                 "Reread 'The lens on the real model' in notebook 06."),
        Question(4, "On running text, the lens at layer 0 of a tied model mostly predicts the input token itself. "
                    "Why?",
                 {"a": "attention in the first block copies the previous token forward",
                  "b": "the tokenizer repeats tokens in running text",
                  "c": "the state is its own row, and a row scores high against itself",
                  "d": "the final norm removes the signal of every other token"},
                 "e04ac06e1be72f209c2b",
                 "Reread 'Layer 0 predicts the input token' in notebook 06."),
        Question(5, "You skip the final norm for the middle layers (say 10 to 25). What do you see there?",
                 {"a": "the same picture as with the norm, only a little noisier",
                  "b": "confident nonsense, and a much larger KL to the final output",
                  "c": "the right answer shows up several layers earlier than before",
                  "d": "an error, since the shapes of the states no longer match"},
                 "f0ac199662e462a37b8d",
                 "Reread 'Two classic mistakes' in notebook 06."),
        Question(6, "The final distribution is P = [0.8, 0.2] and a layer's lens gives Q = [0.4, 0.6]. What is KL(P "
                    "|| Q) in nats, the quantity kl_to_final computes?",
                 {"a": "0.33", "b": "0.38", "c": "0.00", "d": "0.69"},
                 "d685ae4803f74e746f7b",
                 "Reread the KL section of notebook 06: KL(P || Q) = sum P (log P - log Q), with P the final "
                 "distribution."),
    ],
)
