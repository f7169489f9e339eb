"""Configs of the reference models whose sizes the course computes (facts only, no weights).

`meta_model(name)` builds the architecture on PyTorch's `meta` device: every
parameter has a shape but no storage, so even a 70B model costs no memory and
takes well under a second once transformers is imported.

The facts are the published `config.json` values that decide parameter shapes:
vocabulary, widths, depth, heads, and whether the head is tied to the embedding.
Where no architecture exists to instantiate (GPT-3 was never released), only
V and d are kept, in `ARITHMETIC_ONLY`, and sizes come from arithmetic.
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
    # A hybrid decoder (3 Gated DeltaNet layers per full-attention layer) with a vision encoder;
    # the published parameter count includes the vision encoder, so the whole model is built.
    "Qwen3.5-0.8B": dict(
        model_type="qwen3_5", tie_word_embeddings=True,
        text_config=dict(vocab_size=248320, hidden_size=1024, intermediate_size=3584, num_hidden_layers=24,
                         num_attention_heads=8, num_key_value_heads=2, head_dim=256, full_attention_interval=4,
                         linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128,
                         linear_value_head_dim=128, linear_conv_kernel_dim=4, tie_word_embeddings=True),
        vision_config=dict(depth=12, hidden_size=768, num_heads=12, intermediate_size=3072, in_channels=3,
                           patch_size=16, temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=1024,
                           num_position_embeddings=2304),
    ),
    # Qwen2 layers carry a bias on the q, k and v projections (part of the architecture, not the config).
    "Qwen2.5-7B": dict(model_type="qwen2", vocab_size=152064, hidden_size=3584, intermediate_size=18944,
                       num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4,
                       tie_word_embeddings=False),
    "Llama-3-70B": dict(model_type="llama", vocab_size=128256, hidden_size=8192, intermediate_size=28672,
                        num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=8,
                        tie_word_embeddings=False),
}

REFERENCE_CONFIGS.update({
    # The original LLaMA (Touvron et al., 2023): SwiGLU MLPs, untied head, a 32,000-token vocabulary.
    "LLaMA-7B": dict(model_type="llama", vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                     num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                     tie_word_embeddings=False),
    "LLaMA-65B": dict(model_type="llama", vocab_size=32000, hidden_size=8192, intermediate_size=22016,
                      num_hidden_layers=80, num_attention_heads=64, num_key_value_heads=64,
                      tie_word_embeddings=False),
    # An encoder: its masked-LM head (BertForMaskedLM) is tied to the word embedding and has a bias.
    "BERT-base": dict(model_type="bert", vocab_size=30522, hidden_size=768, intermediate_size=3072,
                      num_hidden_layers=12, num_attention_heads=12, max_position_embeddings=512,
                      type_vocab_size=2, tie_word_embeddings=True),
})

# Models with no architecture to instantiate: only V, d and the published (rounded) size.
ARITHMETIC_ONLY: dict[str, dict] = {
    "GPT-3 175B": dict(vocab_size=50257, hidden_size=12288, nominal_params=175_000_000_000),
}

# Which auto class builds the whole published model (default: AutoModelForCausalLM).
_AUTO_CLASS = {"qwen3_5": "AutoModelForImageTextToText", "bert": "AutoModelForMaskedLM"}


def reference_config(name: str, tied: bool | None = None):
    """A transformers config object for one of REFERENCE_CONFIGS.

    tied: None keeps the published choice; True/False overrides `tie_word_embeddings`
    (to ask "what if this model were tied / untied?").
    """
    from transformers import AutoConfig

    facts = {k: (dict(v) if isinstance(v, dict) else v) for k, v in REFERENCE_CONFIGS[name].items()}
    if tied is not None:
        facts["tie_word_embeddings"] = tied
        if "text_config" in facts:
            facts["text_config"]["tie_word_embeddings"] = tied
    return AutoConfig.for_model(facts.pop("model_type"), **facts)


def meta_model(name: str, tied: bool | None = None) -> torch.nn.Module:
    """The reference model's architecture on the meta device (shapes only, no memory)."""
    import transformers

    config = reference_config(name, tied)
    auto = getattr(transformers, _AUTO_CLASS.get(config.model_type, "AutoModelForCausalLM"))
    with torch.device("meta"):
        return auto.from_config(config)


def vocab_and_width(name: str) -> tuple[int, int]:
    """(V, d) of a reference model, from its facts (REFERENCE_CONFIGS or ARITHMETIC_ONLY)."""
    if name in ARITHMETIC_ONLY:
        facts = ARITHMETIC_ONLY[name]
        return facts["vocab_size"], facts["hidden_size"]
    facts = REFERENCE_CONFIGS[name]
    facts = facts.get("text_config", facts)
    return facts["vocab_size"], facts.get("hidden_size", facts.get("n_embd"))
