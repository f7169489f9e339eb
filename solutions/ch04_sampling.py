"""Reference solutions for chapter 04 (softmax and sampling)."""
import torch
from torch import Tensor


def softmax(logits: Tensor, dim: int = -1) -> Tensor:
    if logits.numel() == 0:
        return logits.clone()  # nothing to normalise (amax would refuse a zero-size dim): empty, like torch.softmax
    x = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits  # accumulate in float32
    shifted = x - x.amax(dim=dim, keepdim=True)  # the largest entry becomes 0: exp cannot overflow
    e = shifted.exp()  # -inf -> 0
    return (e / e.sum(dim=dim, keepdim=True)).to(logits.dtype)


def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return logits / temperature


def top_k_filter(logits: Tensor, k: int) -> Tensor:
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # the k-th largest value of each row
    return logits.masked_fill(logits < kth, float("-inf"))  # ties with the k-th value stay


def top_p_filter(logits: Tensor, p: float) -> Tensor:
    sorted_logits, order = logits.sort(dim=-1)  # ascending: least likely first
    # Drop tokens from the bottom while the dropped mass stays <= 1 - p. The token that would push it
    # past 1 - p is the one whose inclusion makes the kept mass reach p: it stays.
    drop_sorted = softmax(sorted_logits).cumsum(dim=-1) <= 1 - p
    drop_sorted[..., -1] = False  # always keep the most likely token
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def min_p_filter(logits: Tensor, min_p: float) -> Tensor:
    probs = softmax(logits)
    threshold = min_p * probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill(probs < threshold, float("-inf"))  # the top token always passes


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> int:
    if temperature == 0:
        return int(logits.argmax())
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = softmax(logits)
    return int(torch.multinomial(probs, 1, generator=generator))


@torch.no_grad()
def greedy_generate(model, input_ids: Tensor, max_new_tokens: int) -> Tensor:
    ids = input_ids
    for _ in range(max_new_tokens):
        logits = model(ids).logits[:, -1, :]  # [B, V]: only the last position predicts the next token
        next_id = logits.argmax(dim=-1, keepdim=True)  # [B, 1]
        ids = torch.cat([ids, next_id], dim=-1)
    return ids


def repetition_penalty(logits: Tensor, input_ids: Tensor, penalty: float) -> Tensor:
    seen = logits.gather(-1, input_ids)  # [B, T]: a repeated id gathers the same logit again
    penalised = torch.where(seen < 0, seen * penalty, seen / penalty)
    return logits.scatter(-1, input_ids, penalised)  # repeated ids write the same value: applied once


QUIZ = {1: "b", 2: "c", 3: "b", 4: "a", 5: "d"}
