"""Learner-side calls of the stretch exercises of chapters 01 and 03 (merged into grading.protocols.PROTOCOLS).

Reference-free: they only call the learner's function and report what they observe; the judge recomputes
every value it can from what comes back.
"""
from __future__ import annotations

from typing import Callable

import torch


def stretch_autograd(fn: Callable, inputs: tuple) -> dict:
    """fn(E, ids) on a fresh leaf copy of E that requires grad, then out.backward(grad_out).

    Reports the output, the class of its grad_fn and whether that is a custom autograd.Function's node, and
    E.grad (None when the output cannot be backpropagated with grad_out).
    """
    E, ids, grad_out = inputs
    E = E.detach().clone().requires_grad_(True)
    out = fn(E, ids)
    node = getattr(out, "grad_fn", None)
    report = {"out": out.detach() if isinstance(out, torch.Tensor) else out,
              "node": type(node).__name__ if node is not None else "None",
              "custom": isinstance(node, torch.autograd.function.BackwardCFunction), "grad": None}
    if isinstance(out, torch.Tensor) and out.requires_grad and out.shape == grad_out.shape:
        out.backward(grad_out.to(out.dtype))
        report["grad"] = E.grad
    return report


def _tensors(model) -> dict:
    """What can only be seen in this process: the config flag, identity and storage of the two matrices."""
    from .protocols import same_storage  # imported here: grading.protocols imports this module while loading

    emb, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    return {"config_tied": bool(getattr(model.config, "tie_word_embeddings", True)),
            "same_storage": same_storage(emb, head), "is_parameter": isinstance(head, torch.nn.Parameter),
            "requires_grad": bool(head.requires_grad), "emb": emb.detach().clone(), "head": head.detach().clone()}


def stretch_untie(fn: Callable, inputs: tuple) -> dict:
    """fn(model); then save_pretrained into a folder in this process's scratch folder, from_pretrained, and one
    SGD step through the reloaded head only (sgd_step_through_head). Reports what it sees at each stage."""
    import os
    import tempfile

    from transformers import AutoModelForCausalLM
    from transformers.utils import logging

    from .protocols import sgd_step_through_head

    os.environ["HF_DEACTIVATE_ASYNC_LOAD"] = "1"  # load without a thread pool: the guard allows only a few threads
    logging.disable_progress_bar()  # and tqdm's monitor thread
    model, x, targets = inputs
    fn(model)
    report = {"after": _tensors(model)}
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:
        model.save_pretrained(folder)
        reloaded = AutoModelForCausalLM.from_pretrained(folder)
    report["reloaded"] = _tensors(reloaded)
    emb, head = reloaded.get_input_embeddings(), reloaded.get_output_embeddings()
    if report["reloaded"]["emb"].shape == report["reloaded"]["head"].shape:
        sgd_step_through_head(emb, head, x, targets)
        report["stepped"] = {"emb": emb.weight.detach().clone(), "head": head.weight.detach().clone()}
    return report


PROTOCOLS = {"stretch_autograd": stretch_autograd, "stretch_untie": stretch_untie}
