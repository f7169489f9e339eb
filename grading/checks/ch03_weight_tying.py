"""Checks for chapter 03, weight tying (exercises/ch03_weight_tying.py)."""
from __future__ import annotations

import copy
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from .compare import CheckFailed, expect_equal, expect_float, expect_tensor, expect_that, matches
from .fixtures import (SharedStorageParameters, TinyLM, cached_tiny_model, course_model, random_ids,
                       random_table)  # TinyLM lives in grading/worker/inputs.py: the worker unpickles it
from ..worker.calls.ch03 import same_storage as _same_storage, sgd_step_through_head as _sgd_step_through_head
from ..model import Case, Chapter, Exercise, Question

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
    "V=10, d=4": lambda: _pair(10, 4, 1),
    "V=50, d=8, a head with a bias (the bias stays the head's own)": lambda: _pair(50, 8, 2, bias=True),
    "V=1: a one-token vocabulary": lambda: _pair(1, 3, 3),
    "an embedding with padding_idx=0": lambda: _pair(20, 6, 4, padding_idx=0),
    "float64 modules": lambda: _pair(12, 5, 7, dtype=torch.float64),
    "a tiny untied transformers Llama: model.model.embed_tokens and model.lm_head": _tiny_llama_pair,
}


def _check_tying(obs, inputs):
    if not isinstance(obs, dict):
        raise CheckFailed("internal: unexpected result format")
    emb, head, x, targets = copy.deepcopy(inputs)  # the judge reuses inputs: never tie the cached ones
    E0, H0 = emb.weight.detach().clone(), head.weight.detach().clone()
    V, d = E0.shape
    expect_that(obs["is_tensor"], "After tie_weights, head.weight is not a tensor at all. Assign the embedding's "
                                  "Parameter to it.")
    if obs["head_shape"] != (V, d):
        transposed = " It looks transposed: nn.Linear(d, V) stores its weight as [V, d] already, the same " \
                     "shape as the embedding, so no .T is needed." if obs["head_shape"] == (d, V) else ""
        raise CheckFailed(f"head.weight has shape {list(obs['head_shape'])}, expected [{V}, {d}].{transposed}")
    if matches(obs["embedding_after_tie"], H0, atol=0, rtol=0) and not torch.equal(E0, H0):
        raise CheckFailed("The embedding lost its values: after tying, embedding.weight holds the head's old "
                          "weights. You tied the wrong way round (embedding.weight = head.weight); the head "
                          "should take the embedding's parameter.")
    expect_tensor(obs["embedding_after_tie"], E0, "embedding.weight right after tying (it should be unchanged)",
                  atol=0, rtol=0)
    expect_tensor(obs["head_after_tie"], E0, "head.weight right after tying (it should equal the embedding)",
                  atol=0, rtol=0)

    # The judge's own tied pair, after the same optimiser step.
    head.weight = emb.weight
    _sgd_step_through_head(emb, head, x, targets)
    expected = emb.weight.detach()
    emb_moved = float((obs["embedding_after_step"] - E0).abs().max())
    head_moved = float((obs["head_after_step"] - E0).abs().max())
    if not (obs["same_storage"] and _same_storage(*obs["pair"])):
        raise CheckFailed(
            "Copied instead of shared: head.weight has the embedding's values but lives in its own memory "
            "(a different storage), so the two drift apart as soon as one is trained. Measured: after one SGD "
            f"step on a loss computed from the head's logits only, the head moved by up to {head_moved:.3g} and the embedding "
            f"by {emb_moved:.3g}. Assign the Parameter itself (head.weight = embedding.weight), not a clone or "
            "a copy_ of its data.")
    if not obs["same_object"]:
        raise CheckFailed(
            "head.weight shares the embedding's memory but is a different Parameter object (for example "
            "nn.Parameter(embedding.weight) or head.weight.data = embedding.weight.data). The module now has "
            f"{obs['n_parameters']} parameters where a tied pair has {2 if head.bias is not None else 1}: "
            "parameters() counts the matrix twice, an optimiser keeps two states for it, and the head's gradient "
            "goes to a different tensor than the embedding's. Assign the Parameter itself: "
            "head.weight = embedding.weight.")
    expect_tensor(obs["embedding_after_step"], expected, "embedding.weight after one SGD step through the head",
                  atol=1e-6, rtol=1e-5, mistakes=[("copied instead of shared: the embedding did not move.", E0)])
    expect_tensor(obs["head_after_step"], expected, "head.weight after the same step", atol=1e-6, rtol=1e-5)
    if head.bias is not None:
        expect_tensor(obs["bias_after_step"], head.bias.detach(), "head.bias after the step (it stays the "
                      "head's own parameter)", atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------- count_parameters


def _shared_linear():
    lin = _built(lambda: nn.Linear(6, 6))
    return (nn.Sequential(lin, nn.ReLU(), lin),)


def _frozen():
    model = _built(lambda: TinyLM(30, 8, tied=True))
    for p in model.block.parameters():
        p.requires_grad_(False)
    model.embed.weight.requires_grad_(False)
    return (model,)


def _tied_with_buffers():
    def make():
        model = TinyLM(40, 8, tied=True)
        model.extra_norm = nn.BatchNorm1d(8)  # buffers, so state_dict() and every name give different wrong counts
        return model
    return (_built(make),)


def _with_buffers():
    return (_built(lambda: nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))),)


def _tiny_hf(tied: bool):
    return (cached_tiny_model("llama", seed=0, vocab_size=128, hidden_size=32, num_layers=2, tied=tied),)


def _meta_qwen3():
    from lesson_utils.reference_models import meta_model

    return (meta_model("Qwen3-0.6B"),)


COUNT_INPUTS = {
    "nn.Linear(4, 3): a weight and a bias": lambda: (_built(lambda: nn.Linear(4, 3)),),
    "a toy LM, untied (embedding and head are two tensors)": lambda: (_built(lambda: TinyLM(40, 8, tied=False)),),
    "the same toy LM, tied (one tensor under two names)": lambda: (_built(lambda: TinyLM(40, 8, tied=True)),),
    "one Linear used twice in a Sequential": _shared_linear,
    "frozen parameters count too": _frozen,
    "buffers are not parameters (BatchNorm running statistics)": _with_buffers,
    "a module with no parameters": lambda: (nn.ReLU(),),
    "a tiny transformers Llama, tied": lambda: _tiny_hf(True),
    "a tiny transformers Llama, untied": lambda: _tiny_hf(False),
    "Qwen3-0.6B on the meta device (shapes only; data_ptr() is 0 for every tensor)": _meta_qwen3,
    "the course model (tied)": lambda: (course_model()[0],),
    "a tied toy LM with a BatchNorm: a shared matrix AND buffers": _tied_with_buffers,
    "two distinct Parameters viewing one storage (a fused [6, 4] weight and its lower half)":
        lambda: (SharedStorageParameters(6, 4, seed=3),),
}


def _count_mistakes(model: nn.Module):
    every_name = list(model.named_parameters(remove_duplicate=False))
    yield ("counted state_dict() entries: a tied matrix appears there under both names, and buffers "
           "(running statistics, masks) are included although they are not parameters.",
           lambda: sum(v.numel() for v in model.state_dict().values()))
    yield ("counted every name: a shared Parameter is registered once per module that holds it "
           "(named_parameters(remove_duplicate=False), or looping over modules). Count each tensor once.",
           lambda: sum(p.numel() for _, p in every_name))
    yield ("counted only trainable parameters (requires_grad=True); frozen parameters are parameters too.",
           lambda: sum(p.numel() for p in model.parameters() if p.requires_grad))
    yield ("deduplicated by data_ptr(): tensors on the meta device (and empty tensors) all report address 0. "
           "Deduplicate by the Parameter object itself; model.parameters() already yields each one once.",
           lambda: sum(p.numel() for p in {p.data_ptr(): p for p in model.parameters()}.values()))
    by_storage = [(p.untyped_storage().data_ptr(), p) for p in model.parameters()]
    for kept in (by_storage, by_storage[::-1]):  # a dict keeps the last Parameter of a storage, setdefault the first
        yield ("deduplicated by storage (untyped_storage().data_ptr()): two different Parameters can view one storage "
               "(a fused matrix exposed in parts) and are still two parameters. Deduplicate by the Parameter object "
               "itself; model.parameters() already yields each one once.",
               lambda kept=kept: sum(p.numel() for p in dict(kept).values()))
    yield ("counted Parameter tensors, not the numbers in them: add up p.numel() for each parameter.",
           lambda: len(list(model.parameters())))


def _check_count(out, inputs):
    (model,) = inputs
    by_identity = {id(p): p for _, p in model.named_parameters(remove_duplicate=False)}  # independent dedup
    expected = sum(p.numel() for p in by_identity.values())
    expect_equal(out, expected, "number of parameters", mistakes=_count_mistakes(model))


# ---------------------------------------------------------------- embedding_share / untied_total

# name: (V, d, tied total); the reference models' checks rebuild them on the meta device.
SHARE_INPUTS = {
    "GPT-2 small": (50257, 768, 124_439_808),
    "Qwen3-0.6B": (151936, 1024, 596_049_920),
    "Qwen3.5-0.8B": (248320, 1024, 852_985_920),
    "the course model (SmolLM2-135M)": (49152, 576, 134_515_008),
    "a model that is nothing but its embedding": (10, 4, 40),
    "a small toy model": (100, 8, 2000),
}


@lru_cache(maxsize=None)
def _meta_counts(name: str) -> tuple[int, int, int]:
    """(tied total, one table, untied total) measured on the meta-device architecture."""
    from lesson_utils.reference_models import meta_model

    def count(m):
        return sum(p.numel() for p in {id(p): p for p in m.parameters()}.values())

    tied = meta_model(name, tied=True)
    return count(tied), tied.get_input_embeddings().weight.numel(), count(meta_model(name, tied=False))


def _share_reference(name: str, V: int, d: int, total: int) -> tuple[int, int]:
    """(one table, untied total): measured on the architecture for the reference models, arithmetic otherwise."""
    if name in ("GPT-2 small", "Qwen3-0.6B", "Qwen3.5-0.8B"):
        _, table, untied = _meta_counts(name)  # tests/test_tying_demo.py pins the tied total to SHARE_INPUTS
        return table, untied
    return V * d, total + V * d


def _check_share(name):
    def check(out, inputs):
        V, d, total = inputs
        table, _ = _share_reference(name, V, d, total)
        expect_float(out, table / total, f"embedding share of {name} (V={V}, d={d}, total={total:,})",
                     atol=1e-12, rtol=1e-9, mistakes=[
                         ("counted the table twice: in a tied model the embedding and the head are ONE table.",
                          2 * V * d / total),
                         ("returned a percentage; return a fraction between 0 and 1.", 100 * table / total),
                         ("divided by the untied total; total_params is the tied model's count.",
                          V * d / (total + V * d)),
                         ("used integer division (//), which rounds the fraction down to 0; use /.", V * d // total),
                     ])
    return check


def _check_untied(name):
    def check(out, inputs):
        V, d, total = inputs
        _, untied = _share_reference(name, V, d, total)
        expect_equal(out, untied, f"untied total of {name} (V={V}, d={d}, tied total={total:,}; an int)", mistakes=[
            ("added two tables: the tied model already contains one V x d table; untying adds ONE more.",
             total + 2 * V * d),
            ("doubled the whole model: only the V x d table is duplicated.", 2 * total),
            ("subtracted the table: untying adds a table, tying removes one.", total - V * d),
            ("returned only the two tables (2 * V * d): untied_total is the WHOLE model, total_params plus the "
             "new head's V x d matrix.", 2 * V * d),
            ("gave the new head a bias (V more): an untied head is a V x d matrix like the embedding, no bias.",
             total + V * d + V),
        ])
    return check


# ---------------------------------------------------------------- rows_with_gradient


def _lm_gradient(tied: bool) -> torch.Tensor:
    """The embedding's gradient after one backward pass of a toy LM on 2 x 12 random tokens."""
    model = _built(lambda: TinyLM(200, 16, tied), seed=3)
    ids = random_ids(200, (2, 13), 8)
    h = model.embed(ids[:, :-1])
    logits = model.head(model.norm(h + model.block(h)))
    F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten()).backward()
    return model.embed.weight.grad.detach()


def _cancelling_rows():
    v = random_ids(9, (30, 3), 21).float() + 1  # whole numbers 1..9, so the sums below are exact
    return torch.cat([v, -v], dim=1)  # every row sums to 0 exactly, but none is zero


def _negative_zeros():
    g = torch.zeros(5, 3)
    g[1] = -0.0
    g[3, 2] = 1.0
    return g


def _one_entry():
    g = torch.zeros(1000, 64)
    g[617, 63] = 1e-3
    return g


ROWS_INPUTS = {
    "the docstring example": lambda: torch.tensor([[0., 0.], [1., -1.], [0., 3.], [2., 5.], [4., 0.]]),
    "tiny values count (2e-30 and 1e-9 are not zero)":
        lambda: torch.tensor([[0., 0.], [0., 2e-30], [1e-9, 2e-9], [5., 0.], [6., 0.]]),
    "rows that sum to zero but are not zero": _cancelling_rows,
    "-0.0 is zero": _negative_zeros,
    "one non-zero entry in the last column of row 617": _one_entry,
    "an all-zero gradient": lambda: torch.zeros(8, 4),
    "an empty vocabulary [0, 4]": lambda: torch.zeros(0, 4),
    "float16 gradient": lambda: torch.tensor([[0., 1e-5], [0., 0.], [-2., 0.]], dtype=torch.float16),
    "untied tiny LM: the input embedding's gradient after one backward pass": lambda: _lm_gradient(False),
    "tied tiny LM: the shared matrix's gradient after one backward pass": lambda: _lm_gradient(True),
}


def _check_rows(out, inputs):
    (grad,) = inputs
    expected = len(torch.unique(torch.nonzero(grad)[:, 0])) if grad.numel() else 0  # rows that hold a non-zero
    nz = grad != 0
    expect_equal(out, expected, f"rows with non-zero gradient in a {list(grad.shape)} gradient (a Python int)", mistakes=[
        ("counted non-zero entries, not rows.", lambda: int(nz.sum())),
        ("counted rows whose entries are ALL non-zero; a row counts if ANY entry is non-zero.",
         lambda: int(nz.all(dim=1).sum()) if grad.numel() else 0),
        ("summed each row: a row like [1, -1] sums to 0 but its gradient is not zero. Test each entry.",
         lambda: int((grad.sum(dim=1) != 0).sum())),
        ("used a tolerance: any non-zero value, however small, means the row receives gradient.",
         lambda: int((grad.abs() > 1e-6).any(dim=1).sum()) if grad.numel() else 0),
        ("squared the entries (a row norm or a sum of squares): tiny values underflow, 2e-30 ** 2 is 0 in float32 "
         "(1e-5 ** 2 in float16). Test each entry: (grad != 0).any(dim=1).",
         lambda: int(((grad ** 2).sum(dim=1) > 0).sum()) if grad.numel() else 0),
    ])


def _rows_inputs(make):
    return lambda: (make(),)


# ---------------------------------------------------------------- the chapter

# ---------------------------------------------------------------- stretch: untie_lm_head


def _untie_case(arch: str, seed: int, tied: bool = True, vocab_size: int = 128) -> tuple:
    """(a tiny model, hidden states x [4, d], targets [4]) for the SGD step through the reloaded head."""
    model = cached_tiny_model(arch, seed, tied=tied, vocab_size=vocab_size)
    d = model.get_input_embeddings().weight.shape[1]
    return model, random_table(4, d, seed + 300), random_ids(vocab_size, (4,), seed + 301)


UNTIE_INPUTS = {
    "a tied tiny Llama (V = 128, d = 32)": lambda: _untie_case("llama", 20),
    "a tied tiny Qwen3": lambda: _untie_case("qwen3", 21),
    "a tied tiny GPT-2 (lm_head tied to transformer.wte)": lambda: _untie_case("gpt2", 22),
    "a tied tiny Llama with V = 1000": lambda: _untie_case("llama", 23, vocab_size=1000),
    "an already untied tiny Llama: its head keeps its own values": lambda: _untie_case("llama", 24, tied=False),
}

_RELOAD = "model.save_pretrained(folder) then AutoModelForCausalLM.from_pretrained(folder)"


def _check_untie_stage(seen: dict, E: torch.Tensor, H: torch.Tensor, tied: bool, stage: str) -> None:
    if seen["same_storage"]:
        raise CheckFailed(
            f"{stage}: the head and the embedding still share one storage. " + (
                "Setting config.tie_word_embeddings = False (or wrapping the same tensor in a new Parameter, "
                "nn.Parameter(emb.weight)) does not copy anything: give the head "
                "nn.Parameter(emb.weight.detach().clone())." if stage == "after untie_lm_head" else
                "config.tie_word_embeddings was still True when the model was saved, so from_pretrained tied them "
                "again: set model.config.tie_word_embeddings = False."))
    if seen["config_tied"]:
        raise CheckFailed(f"{stage}: config.tie_word_embeddings is True; the saved config must say False, or "
                          "from_pretrained (and model.tie_weights()) ties the head to the embedding again.")
    if not (seen["is_parameter"] and seen["requires_grad"]):
        raise CheckFailed(f"{stage}: the head's weight is not a trainable nn.Parameter (is_parameter="
                          f"{seen['is_parameter']}, requires_grad={seen['requires_grad']}): a head that does not "
                          "train is not a head of its own. Use nn.Parameter(...) with requires_grad left True.")
    expect_tensor(seen["emb"], E, f"{stage}: the embedding matrix", atol=0, rtol=0)
    expect_tensor(seen["head"], H, f"{stage}: the head's weight (a copy of the shared matrix)", atol=0, rtol=0,
                  mistakes=[] if tied else [
                      ("the model was already untied: its head has its own values, which must stay; you overwrote "
                       "them with the embedding's.", E)])


def _check_untie(out, inputs):
    model, x, targets = inputs
    E = model.get_input_embeddings().weight.detach().clone()
    H = model.get_output_embeddings().weight.detach().clone()
    tied = _same_storage(model.get_input_embeddings().weight, model.get_output_embeddings().weight)
    _check_untie_stage(out["after"], E, H, tied, "after untie_lm_head")
    _check_untie_stage(out["reloaded"], E, H, tied, f"after {_RELOAD}")
    emb = nn.Embedding.from_pretrained(E.clone(), freeze=False)
    head = nn.Linear(E.shape[1], E.shape[0], bias=False)
    with torch.no_grad():
        head.weight.copy_(H)
    _sgd_step_through_head(emb, head, x, targets)
    stepped = out.get("stepped")
    expect_that(stepped is not None, "internal: the reloaded model's step was not taken.")
    expect_tensor(stepped["emb"], E, "the reloaded embedding after one SGD step through the head only (it must not "
                  "change: the matrices are separate)", atol=0, rtol=0)
    expect_tensor(stepped["head"], head.weight.detach(), "the reloaded head after one SGD step through the head",
                  atol=1e-6, rtol=1e-5)


CHAPTER = Chapter(
    number="03",
    module="ch03_weight_tying",
    title="Weight tying",
    exercises=[
        Exercise(
            "tie_weights", "make the head use the embedding's Parameter (shared, not copied)",
            [Case(n, m, _check_tying, "observe_tying") for n, m in TIE_INPUTS.items()],
            hint="A module's parameter is an attribute: assigning a Parameter to head.weight replaces it. "
                 "Which object should head.weight be afterwards? Copying values (copy_, clone, .data) is not "
                 "sharing.",
        ),
        Exercise(
            "count_parameters", "parameters counted once per tensor",
            [Case(n, m, _check_count) for n, m in COUNT_INPUTS.items()],
            hint="model.parameters() yields every Parameter once, even when several modules hold it. "
                 "state_dict() lists names (and buffers), not tensors.",
            uses_course_model=True,
        ),
        Exercise(
            "embedding_share", "fraction of a tied model's parameters in its V x d table",
            [Case(n, (lambda v=v: v), _check_share(n)) for n, v in SHARE_INPUTS.items()],
            hint="One table holds V * d numbers. In a tied model it is counted once in total_params.",
        ),
        Exercise(
            "untied_total", "parameters the same model would have with an untied head",
            [Case(n, (lambda v=v: v), _check_untied(n)) for n, v in SHARE_INPUTS.items()],
            hint="Untying gives the head its own V x d matrix; nothing else changes. Keep it an int.",
        ),
        Exercise(
            "rows_with_gradient", "rows of a [V, d] gradient that are not all zero",
            [Case(n, _rows_inputs(m), _check_rows) for n, m in ROWS_INPUTS.items()],
            hint="grad != 0 is a [V, d] boolean tensor; reduce it over the d axis with 'any', then count. "
                 "Return a Python int.",
        ),
        Exercise(
            "untie_lm_head", "stretch: give a tied HF model its own head (a copy) that stays untied after save/reload",
            [Case(n, m, _check_untie, "stretch_untie") for n, m in UNTIE_INPUTS.items()],
            hint="emb, head = model.get_input_embeddings(), model.get_output_embeddings(). If they share storage, "
                 "head.weight = nn.Parameter(emb.weight.detach().clone()). Then model.config.tie_word_embeddings = "
                 "False: without it from_pretrained ties them again.",
            timeout_s=60.0,
        ),
    ],
    quiz=[
        Question(1, "A config says tie_word_embeddings=True. This means:",
                 {"a": "the embedding is frozen during training",
                  "b": "the LM head uses the same [V, d] tensor as the input embedding",
                  "c": "the head starts as a copy of the embedding and is then trained separately",
                  "d": "the tokenizer uses one vocabulary for input and output text"},
                 "8d7fc1c192b22d2b985e",
                 "Reread 'One tensor, two names' in notebook 03."),
        Question(2, "In a tied model, how often does the shared matrix appear in model.state_dict() and in "
                    "model.parameters()?",
                 {"a": "once in each (the tie is only a flag)",
                  "b": "twice in each, one per name",
                  "c": "twice in state_dict, once in parameters()",
                  "d": "once in state_dict, twice in parameters()"},
                 "d1fa50e283355e697dcc",
                 "Reread 'Counting each tensor once' in notebook 03."),
        Question(3, "In an UNTIED model, after one backward pass, which rows of the input embedding have a non-zero "
                    "gradient?",
                 {"a": "only the rows of tokens that appeared as inputs",
                  "b": "every row, through the softmax over the vocabulary",
                  "c": "only the rows of the target tokens",
                  "d": "none until the optimiser step has run"},
                 "20a3a584c579ee767eb6",
                 "Reread 'The update rule, measured' in notebook 03."),
        Question(4, "Why is the V x d table a much smaller share of a 70B model than of a 0.6B model?",
                 {"a": "large models use much smaller vocabularies",
                  "b": "large models keep their embedding in lower precision",
                  "c": "large models have no embedding table",
                  "d": "the table grows like V·d, the blocks like L·d²"},
                 "19319a9350b938eb1ba7",
                 "Reread 'Parameter accounting for the reference models' in notebook 03."),
        Question(5, "Qwen3-0.6B (V = 151,936, d = 1,024) has 596,049,920 parameters with its table tied. How many "
                    "would it have with a separate head of the same shape?",
                 {"a": "440,467,456", "b": "751,632,384", "c": "1,192,099,840", "d": "596,049,920"},
                 "4be654337ac7dadc79fe",
                 "Reread the parameter accounting in notebook 03: untying adds one more V x d matrix, nothing else."),
    ],
)
