"""Tiny randomly initialised causal LMs of real architectures, built in milliseconds for tests."""
from __future__ import annotations

import torch

ARCHITECTURES = ("llama", "qwen3", "gpt2")


def tiny_config(arch: str = "llama", vocab_size: int = 128, hidden_size: int = 32,
                num_layers: int = 2, tied: bool = True):
    """A transformers config for a tiny model of the given architecture."""
    from transformers import GPT2Config, LlamaConfig, Qwen3Config

    if arch == "gpt2":
        return GPT2Config(vocab_size=vocab_size, n_embd=hidden_size, n_layer=num_layers, n_head=4,
                          n_positions=128, tie_word_embeddings=tied,
                          bos_token_id=vocab_size - 1, eos_token_id=vocab_size - 1)
    common = dict(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                  num_hidden_layers=num_layers, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=128, tie_word_embeddings=tied)
    if arch == "llama":
        return LlamaConfig(**common)
    if arch == "qwen3":
        return Qwen3Config(head_dim=hidden_size // 4, **common)
    raise ValueError(f"Unknown architecture {arch!r}; choose one of {ARCHITECTURES}.")


def tiny_model(arch: str = "llama", vocab_size: int = 128, hidden_size: int = 32,
               num_layers: int = 2, tied: bool = True, seed: int = 0):
    """A tiny random causal LM (`AutoModelForCausalLM`) in eval mode, deterministic for a seed."""
    from transformers import AutoModelForCausalLM

    config = tiny_config(arch, vocab_size, hidden_size, num_layers, tied)
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    return model.eval()
