"""The reference models built on the meta device reproduce the published parameter counts."""
import time

import pytest
import torch

from lesson_utils.reference_models import (
    ARITHMETIC_ONLY, REFERENCE_CONFIGS, meta_model, reference_config, vocab_and_width,
)

# name: (total parameters counted once, V, d, tied) as published for each model
PUBLISHED = {
    "GPT-2 small": (124_439_808, 50257, 768, True),
    "Qwen3-0.6B": (596_049_920, 151936, 1024, True),
    "Qwen3.5-0.8B": (852_985_920, 248320, 1024, True),
    "Qwen2.5-7B": (7_615_616_512, 152064, 3584, False),
    "Llama-3-70B": (70_553_706_496, 128256, 8192, False),
    "LLaMA-7B": (6_738_415_616, 32000, 4096, False),
    "LLaMA-65B": (65_285_660_672, 32000, 8192, False),
    "BERT-base": (109_514_298, 30522, 768, True),  # BertForMaskedLM: no pooler, an MLM transform and a bias
}


def unique_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def test_every_reference_model_is_covered():
    assert set(PUBLISHED) == set(REFERENCE_CONFIGS)


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_published_totals(name):
    total, V, d, tied = PUBLISHED[name]
    model = meta_model(name)
    E, W = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    assert E.device.type == "meta"
    assert unique_count(model) == total
    assert tuple(E.shape) == tuple(W.shape) == (V, d) == vocab_and_width(name)
    assert (W is E) == tied == reference_config(name).tie_word_embeddings


def test_qwen35_embedding_and_untied_total():
    E = meta_model("Qwen3.5-0.8B").get_input_embeddings().weight
    assert E.numel() == 254_279_680
    assert unique_count(meta_model("Qwen3.5-0.8B", tied=False)) == 1_107_265_600


def test_qwen25_embedding_plus_head():
    model = meta_model("Qwen2.5-7B")
    both = model.get_input_embeddings().weight.numel() + model.get_output_embeddings().weight.numel()
    assert both == 1_089_994_752


def test_tied_override_removes_one_table():
    V, d = vocab_and_width("Llama-3-70B")
    assert unique_count(meta_model("Llama-3-70B")) - unique_count(meta_model("Llama-3-70B", tied=True)) == V * d


def test_gpt3_is_arithmetic_only():
    assert vocab_and_width("GPT-3 175B") == (50257, 12288)
    assert "GPT-3 175B" not in REFERENCE_CONFIGS and "GPT-3 175B" in ARITHMETIC_ONLY


def test_meta_instantiation_is_fast():
    meta_model("GPT-2 small")  # imports transformers' modelling code first
    start = time.perf_counter()
    meta_model("Llama-3-70B")
    assert time.perf_counter() - start < 5.0


def test_chapter03_share_cases_match_the_meta_counts():
    """The judge's embedding_share / untied_total cases state tied totals that the architectures reproduce."""
    from grading.checks.ch03_weight_tying.counting import SHARE_INPUTS, _meta_counts

    for name in ("GPT-2 small", "Qwen3-0.6B", "Qwen3.5-0.8B"):
        V, d, total = SHARE_INPUTS[name]
        tied_total, table, untied = _meta_counts(name)
        assert (tied_total, table, untied) == (total, V * d, total + V * d)


def test_llama7b_head_against_one_swiglu_mlp():
    """Chapter 02: LLaMA-7B's head costs about as much per token as one of its 32 MLP layers."""
    model = meta_model("LLaMA-7B")
    mlp = model.model.layers[0].mlp
    mlp_weights = sum(m.weight.numel() for m in (mlp.gate_proj, mlp.up_proj, mlp.down_proj))
    assert model.lm_head.weight.numel() == 4096 * 32000
    assert mlp_weights == 3 * 4096 * 11008
