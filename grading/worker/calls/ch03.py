"""Chapter 03's learner-side calls: tying observed in the learner's process."""
from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

STEP_LR = 0.5  # tie_weights: learning rate of the observed SGD step


def same_storage(a: Any, b: Any) -> bool:
    """Whether two tensors live in the same storage."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
            and a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())


def sgd_step_through_head(emb: nn.Embedding, head: nn.Linear, x: torch.Tensor, targets: torch.Tensor) -> None:
    """One plain SGD step (p -= lr * p.grad) on a loss computed from the head's logits only.

    The loss is cross-entropy plus a small penalty on the logits' size (so that even a one-token
    vocabulary, whose cross-entropy is always 0, gets a gradient); the embedding's lookup is not used.
    """
    params = list(nn.ModuleList([emb, head]).parameters())  # a shared Parameter is listed once
    logits = head(x)
    (F.cross_entropy(logits, targets) + 0.1 * logits.pow(2).mean()).backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= STEP_LR * p.grad


def observe_tying(fn: Callable, inputs: tuple) -> dict:
    """Tie, then report what can only be seen here (identity, storage) and the values."""
    emb, head, x, targets = inputs
    original = emb.weight
    fn(emb, head)
    w = head.weight
    obs = {
        "embedding_kept": emb.weight is original,  # the embedding still holds its own Parameter object
        "head_parameters": sorted(name for name, _ in head.named_parameters()),
        "is_tensor": isinstance(w, torch.Tensor),
        "same_object": w is emb.weight,
        "same_storage": same_storage(w, emb.weight),
        "n_parameters": len(list(nn.ModuleList([emb, head]).parameters())),
        "embedding_after_tie": emb.weight.detach().clone(),
    }
    if not obs["is_tensor"]:
        return obs
    obs["head_shape"] = tuple(w.shape)
    obs["head_after_tie"] = w.detach().clone()
    if obs["head_shape"] == tuple(emb.weight.shape):
        sgd_step_through_head(emb, head, x, targets)
        obs["embedding_after_step"] = emb.weight.detach().clone()
        obs["head_after_step"] = head.weight.detach().clone()
        obs["bias_after_step"] = head.bias.detach().clone() if head.bias is not None else None
        obs["pair"] = (emb.weight, head.weight)  # sent as is: the judge sees whether they share storage
    return obs


def _tensors(model) -> dict:
    """What can only be seen in this process: the config flag, identity and storage of the two matrices."""
    emb, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    return {"config_tied": bool(getattr(model.config, "tie_word_embeddings", True)),
            "same_storage": same_storage(emb, head), "is_parameter": isinstance(head, torch.nn.Parameter),
            "requires_grad": bool(head.requires_grad), "emb": emb.detach().clone(), "head": head.detach().clone(),
            "head_parameters": sorted(name for name, _ in model.get_output_embeddings().named_parameters())}


def stretch_untie(fn: Callable, inputs: tuple) -> dict:
    """fn(model) (a 4th input "by storage" first gives the head a Parameter of its own on the embedding's storage:
    tied by storage, not by identity); then save_pretrained into a folder in this process's scratch folder, from_pretrained, and one
    SGD step through the reloaded head only (sgd_step_through_head). Reports what it sees at each stage."""
    import os
    import tempfile

    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    os.environ["HF_DEACTIVATE_ASYNC_LOAD"] = "1"  # load without a thread pool: the guard allows only a few threads
    logging.disable_progress_bar()  # and tqdm's monitor thread
    model, x, targets = inputs[:3]
    if inputs[3:] == ("by storage",):  # re-tied here, in the learner's process: a pickle would split the storage
        emb, head = model.get_input_embeddings(), model.get_output_embeddings()
        head.weight = nn.Parameter(emb.weight.detach())  # another Parameter object on the same storage
    report = {"before": {"head_parameters": sorted(n for n, _ in model.get_output_embeddings().named_parameters())}}
    fn(model)
    report["after"] = _tensors(model)
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:
        model.save_pretrained(folder)
        reloaded = AutoModelForCausalLM.from_pretrained(folder)
    report["reloaded"] = _tensors(reloaded)
    emb, head = reloaded.get_input_embeddings(), reloaded.get_output_embeddings()
    if report["reloaded"]["emb"].shape == report["reloaded"]["head"].shape:
        sgd_step_through_head(emb, head, x, targets)
        report["stepped"] = {"emb": emb.weight.detach().clone(), "head": head.weight.detach().clone()}
    return report


PROTOCOLS = {"observe_tying": observe_tying, "stretch_untie": stretch_untie}
