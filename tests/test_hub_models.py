"""load_model works on local folders and fails with instructions, never a raw hub traceback."""
from __future__ import annotations

import pytest
import torch

from lesson_utils import ModelNotAvailable, load_model, model_available, tiny_model, try_load_model
from lesson_utils.tiny_models import ARCHITECTURES


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # an empty hub cache


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_load_model_from_a_local_folder(arch, tmp_path):
    from transformers import PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models, pre_tokenizers

    model = tiny_model(arch, vocab_size=64)
    model.save_pretrained(tmp_path)
    vocab = {f"t{i}": i for i in range(64)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="t0"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="t0").save_pretrained(tmp_path)
    loaded, tok = load_model(tmp_path)
    ids = tok("t1 t2 t3", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.allclose(loaded(ids).logits, model(ids).logits, atol=1e-5)
    assert model_available(tmp_path)


def test_unavailable_model_explains_how_to_get_it(offline):
    with pytest.raises(ModelNotAvailable) as err:
        load_model("gpt2")
    msg = str(err.value)
    assert "hf download gpt2" in msg and "load_course_model" in msg
    assert not model_available("Qwen/Qwen3-0.6B")


def test_try_load_model_returns_none_and_prints_instructions(offline, capsys):
    assert try_load_model("gpt2") is None
    assert "hf download gpt2" in capsys.readouterr().out


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_tiny_models_are_fast_tied_and_deterministic(arch):
    import time

    start = time.perf_counter()
    a = tiny_model(arch, seed=3)
    assert time.perf_counter() - start < 1.0
    b = tiny_model(arch, seed=3)
    assert a.get_output_embeddings().weight is a.get_input_embeddings().weight
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not tiny_model(arch, tied=False).config.tie_word_embeddings
