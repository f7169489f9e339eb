EXERCISE = "top_k_filter"
MISTAKE = "finds the k-th value in a float32 copy and compares float32 values: float64 logits that differ past float32 precision tie"
EXPECT = 'float32'
import torch


def top_k_filter(logits, k):
    k = min(k, logits.shape[-1])
    x = logits.float()
    kth = torch.topk(x, k, dim=-1).values[..., -1:]
    return logits.masked_fill(x < kth, float("-inf"))
