"""Configs of the reference models whose sizes the course computes (facts only, no weights).

`meta_model(name)` builds the architecture on PyTorch's `meta` device: every
parameter has a shape but no storage, so even a 70B model costs no memory.
"""
from __future__ import annotations

import torch

# Published architecture facts: vocabulary, widths, depth, heads, tying.
REFERENCE_CONFIGS: dict[str, dict] = {
    "GPT-2 small": dict(model_type="gpt2", vocab_size=50257, n_embd=768, n_layer=12, n_head=12,
                        n_positions=1024, tie_word_embeddings=True),
    "Qwen3-0.6B": dict(model_type="qwen3", vocab_size=151936, hidden_size=1024, intermediate_size=3072,
                       num_hidden_layers=28, num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                       tie_word_embeddings=True),
}


def reference_config(name: str):
    """A transformers config object for one of REFERENCE_CONFIGS."""
    from transformers import AutoConfig

    facts = dict(REFERENCE_CONFIGS[name])
    return AutoConfig.for_model(facts.pop("model_type"), **facts)


def meta_model(name: str) -> torch.nn.Module:
    """The reference model's architecture on the meta device (shapes only, no memory)."""
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(reference_config(name))
