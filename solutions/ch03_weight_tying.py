"""Chapter 03 exercises: weight tying.

Fill in each function, then run `python judge.py 03` (or `python judge.py tie_weights`
for one exercise). `python judge.py hint tie_weights` gives a hint without the answer.

Leave the tensors, lists and models you are given unchanged unless the docstring says otherwise (`tie_weights`
and `untie_lm_head` change the model by design): the judge compares them before and after your call.
"""
import torch
from torch import Tensor, nn


def tie_weights(embedding: nn.Embedding, head: nn.Linear) -> None:
    """Make the LM head use the embedding's parameter: one shared tensor, not a copy.

    embedding: nn.Embedding(V, d); its weight E has shape [V, d].
    head:      nn.Linear(d, V); its weight also has shape [V, d] (out_features x in_features).
    returns:   None. Afterwards `head.weight is embedding.weight`, so head(h) computes h @ E^T
               (plus head.bias, if the head has one), the embedding keeps its own values, and an
               optimiser step that changes one changes the other.

    Example: emb, head = nn.Embedding(10, 4), nn.Linear(4, 10, bias=False)
             tie_weights(emb, head)
             head.weight.data_ptr() == emb.weight.data_ptr()   -> True
    """
    # BEGIN SOLUTION
    head.weight = embedding.weight
    # END SOLUTION


def count_parameters(model: nn.Module) -> int:
    """Number of parameters in `model`, each parameter tensor counted once.

    A tied embedding and head are one tensor registered under two names: count it once.
    Frozen parameters (requires_grad=False) count; buffers (running statistics, masks) do not.
    Works on any device, including `meta` (shapes without data).

    Example: nn.Linear(4, 3) -> 15   (a 3 x 4 weight and a bias of 3)
    """
    # BEGIN SOLUTION
    return sum(p.numel() for p in model.parameters())  # parameters() yields a shared tensor once
    # END SOLUTION


def embedding_share(vocab_size: int, d_model: int, total_params: int) -> float:
    """Fraction (between 0 and 1) of a tied model's `total_params` that sits in its V x d embedding table.

    Example: embedding_share(10, 4, 100) -> 0.4
    """
    # BEGIN SOLUTION
    return vocab_size * d_model / total_params
    # END SOLUTION


def untied_total(vocab_size: int, d_model: int, total_params: int) -> int:
    """Parameter count of the same model with the head untied (given the tied model's `total_params`).

    Example: untied_total(10, 4, 100) -> 140
    """
    # BEGIN SOLUTION
    return total_params + vocab_size * d_model
    # END SOLUTION


def rows_with_gradient(grad: Tensor) -> int:
    """Number of rows of a [V, d] gradient that are not entirely zero (a Python int).

    grad: [V, d], any float dtype. A row counts if any of its entries is non-zero, however small.
    Example: rows_with_gradient(torch.tensor([[0., 0.], [1., -1.], [0., 3.], [2., 5.], [4., 0.]])) -> 4
    """
    # BEGIN SOLUTION
    return int((grad != 0).any(dim=1).sum())
    # END SOLUTION


def untie_lm_head(model) -> None:
    """Stretch: give a tied Hugging Face causal LM a head of its own, in place, so that it stays untied on disk.

    model: a transformers causal LM (model.get_input_embeddings(), model.get_output_embeddings()) of any float
           dtype, whose head and embedding may share one weight matrix [V, d] (one Parameter under two names, or
           two Parameter objects on one storage).
    After the call: the head's weight is a new nn.Parameter (it trains) holding a COPY of the shared matrix (its own
    storage, equal values, the same dtype); model.config.tie_word_embeddings is False, so that model.save_pretrained(folder) then
    AutoModelForCausalLM.from_pretrained(folder) gives two separate tensors with those equal values, and a training
    step on the head leaves the embedding unchanged. A model that is already untied keeps its head's values.

    Example: untie_lm_head(model); model.lm_head.weight is model.model.embed_tokens.weight -> False,
             torch.equal(model.lm_head.weight, model.model.embed_tokens.weight) -> True
    """
    # BEGIN SOLUTION
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    if head.weight.untyped_storage().data_ptr() == emb.weight.untyped_storage().data_ptr():
        head.weight = nn.Parameter(emb.weight.detach().clone())  # its own storage, the same values
    model.config.tie_word_embeddings = False  # else from_pretrained (and tie_weights) would tie them again
    # END SOLUTION


# Chapter 03 quiz: `python judge.py quiz 03` prints the questions.
# Put one letter per question, e.g. {1: "a", 2: "c", 3: "b", 4: "d"}.
QUIZ = {1: "d", 2: "c", 3: "d", 4: "b", 5: "b"}  # SOLUTION
# PROMPT: QUIZ = {1: None, 2: None, 3: None, 4: None, 5: None}
