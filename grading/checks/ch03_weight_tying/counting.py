"""Chapter 03: count_parameters, embedding_share and untied_total against meta-device models."""
from __future__ import annotations

from functools import lru_cache

from torch import nn

from ..compare import expect_equal, expect_float
from ..fixtures import SharedStorageParameters, TinyLM, cached_tiny_model, course_model
from .tying import _built
from ...i18n import N_, _


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
    _("nn.Linear(4, 3): a weight and a bias"): lambda: (_built(lambda: nn.Linear(4, 3)),),
    _("a toy LM, untied (embedding and head are two tensors)"): lambda: (_built(lambda: TinyLM(40, 8, tied=False)),),
    _("the same toy LM, tied (one tensor under two names)"): lambda: (_built(lambda: TinyLM(40, 8, tied=True)),),
    _("one Linear used twice in a Sequential"): _shared_linear,
    _("frozen parameters count too"): _frozen,
    _("buffers are not parameters (BatchNorm running statistics)"): _with_buffers,
    _("a module with no parameters"): lambda: (nn.ReLU(),),
    _("a tiny transformers Llama, tied"): lambda: _tiny_hf(True),
    _("a tiny transformers Llama, untied"): lambda: _tiny_hf(False),
    _("Qwen3-0.6B on the meta device (shapes only; data_ptr() is 0 for every tensor)"): _meta_qwen3,
    _("the course model (tied)"): lambda: (course_model()[0],),
    _("a tied toy LM with a BatchNorm: a shared matrix AND buffers"): _tied_with_buffers,
    _("two distinct Parameters viewing one storage (a fused [6, 4] weight and its lower half)"):
        lambda: (SharedStorageParameters(6, 4, seed=3),),
}


def _count_mistakes(model: nn.Module):
    every_name = list(model.named_parameters(remove_duplicate=False))
    yield (_("counted state_dict() entries: a tied matrix appears there under both names, and buffers "
             "(running statistics, masks) are included although they are not parameters."),
           lambda: sum(v.numel() for v in model.state_dict().values()))
    yield (_("counted every name: a shared Parameter is registered once per module that holds it "
             "(named_parameters(remove_duplicate=False), or looping over modules). Count each tensor once."),
           lambda: sum(p.numel() for _, p in every_name))
    yield (_("counted only trainable parameters (requires_grad=True); frozen parameters are parameters too."),
           lambda: sum(p.numel() for p in model.parameters() if p.requires_grad))
    by_address = [(p.data_ptr(), p) for p in model.parameters()]
    for kept in (by_address, by_address[::-1]):  # a dict keeps the last Parameter of an address, setdefault the first
        yield (_("deduplicated by data_ptr(): tensors on the meta device (and empty tensors) all report address 0. "
                 "Deduplicate by the Parameter object itself; model.parameters() already yields each one once."),
               lambda kept=kept: sum(p.numel() for p in dict(kept).values()))
    by_storage = [(p.untyped_storage().data_ptr(), p) for p in model.parameters()]
    for kept in (by_storage, by_storage[::-1]):
        yield (_("deduplicated by storage (untyped_storage().data_ptr()): two different Parameters can view one "
                 "storage (a fused matrix exposed in parts) and are still two parameters. Deduplicate by the "
                 "Parameter object itself; model.parameters() already yields each one once."),
               lambda kept=kept: sum(p.numel() for p in dict(kept).values()))
    yield (_("counted Parameter tensors, not the numbers in them: add up p.numel() for each parameter."),
           lambda: len(list(model.parameters())))


def _check_count(out, inputs):
    (model,) = inputs
    by_identity = {id(p): p for _, p in model.named_parameters(remove_duplicate=False)}  # independent dedup
    expected = sum(p.numel() for p in by_identity.values())
    expect_equal(out, expected, _("number of parameters"), mistakes=_count_mistakes(model))


# ---------------------------------------------------------------- embedding_share / untied_total

# name: (V, d, tied total); the reference models' checks rebuild them on the meta device. The names stay plain keys
# (meta_model looks the reference models up by them): N_ puts them in the catalog, and the cases show them with _().
SHARE_INPUTS = {
    N_("GPT-2 small"): (50257, 768, 124_439_808),
    N_("Qwen3-0.6B"): (151936, 1024, 596_049_920),
    N_("Qwen3.5-0.8B"): (248320, 1024, 852_985_920),
    N_("the course model (SmolLM2-135M)"): (49152, 576, 134_515_008),
    N_("a model that is nothing but its embedding"): (10, 4, 40),
    N_("a small toy model"): (100, 8, 2000),
    N_("a hypothetical 10**16-parameter model (beyond 2**53: only integer arithmetic stays exact)"):
        (262144, 16384, 10**16 + 1),
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
        table = _share_reference(name, V, d, total)[0]
        expect_float(out, table / total, _("embedding share of {name} (V={V}, d={d}, total={total:,})", name=_(name),
                                           V=V, d=d, total=total),
                     atol=1e-12, rtol=1e-9, python=True, mistakes=[
                         (_("counted the table twice: in a tied model the embedding and the head are ONE table."),
                          2 * V * d / total),
                         (_("returned a percentage; return a fraction between 0 and 1."), 100 * table / total),
                         (_("divided by the untied total; total_params is the tied model's count."),
                          V * d / (total + V * d)),
                         (_("used integer division (//), which rounds the fraction down to 0; use /."),
                          V * d // total),
                     ])
    return check


def _check_untied(name):
    def check(out, inputs):
        V, d, total = inputs
        untied = _share_reference(name, V, d, total)[1]
        expect_equal(out, untied, _("untied total of {name} (V={V}, d={d}, tied total={total:,}; an int)",
                                    name=_(name), V=V, d=d, total=total), mistakes=[
            (_("added two tables: the tied model already contains one V x d table; untying adds ONE more."),
             total + 2 * V * d),
            (_("doubled the whole model: only the V x d table is duplicated."), 2 * total),
            (_("subtracted the table: untying adds a table, tying removes one."), total - V * d),
            (_("returned only the two tables (2 * V * d): untied_total is the WHOLE model, total_params plus the "
               "new head's V x d matrix."), 2 * V * d),
            (_("gave the new head a bias (V more): an untied head is a V x d matrix like the embedding, no bias."),
             total + V * d + V),
        ])
    return check
