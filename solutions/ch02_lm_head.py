"""Reference solutions for chapter 02 (the LM head)."""
import torch
import torch.nn.functional as F
from torch import LongTensor, Tensor


def lm_head_logits(h: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    logits = h @ W.T
    return logits if b is None else logits + b


def top_k_tokens(logits: Tensor, k: int) -> tuple[Tensor, LongTensor]:
    values, ids = torch.sort(logits, descending=True, stable=True)  # stable: equal values keep id order
    return values[:k], ids[:k]


def lm_head_flops(d: int, V: int, positions: int = 1) -> int:
    return 2 * d * V * positions


def logit_contributions(h: Tensor, w: Tensor) -> tuple[Tensor, float]:
    cos = F.cosine_similarity(h.double(), w.double(), dim=0)
    return h * w, float(cos)


def _best_k(values: Tensor, ids: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The k best (value descending, then id ascending) of candidate columns."""
    by_id = torch.sort(ids, dim=-1, stable=True).indices
    values, ids = values.gather(-1, by_id), ids.gather(-1, by_id)
    by_value = torch.sort(values, dim=-1, descending=True, stable=True).indices[:, :k]  # stable: lower id first
    return values.gather(-1, by_value), ids.gather(-1, by_value)


def topk_logits_chunked(h: Tensor, W: Tensor, k: int, chunk: int) -> tuple[Tensor, LongTensor]:
    N = h.shape[0]
    best_v = h.new_empty(N, 0)
    best_i = torch.empty(N, 0, dtype=torch.long)
    for start in range(0, W.shape[0], chunk):
        logits = h @ W[start:start + chunk].T  # [N, c]: one chunk of the vocabulary
        ids = torch.arange(start, start + logits.shape[1]).expand(N, -1)
        best_v, best_i = _best_k(torch.cat([best_v, logits], -1), torch.cat([best_i, ids], -1), k)
    return best_v, best_i


QUIZ = {1: "c", 2: "b", 3: "a", 4: "d", 5: "a", 6: "c"}
