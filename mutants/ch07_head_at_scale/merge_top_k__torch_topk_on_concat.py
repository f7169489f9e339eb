"""The notebook's worker merge: torch.topk on the concatenated lists, no rule for ties (and only 1-D)."""
EXERCISE = 'merge_top_k'
MISTAKE = "the notebook's worker merge: torch.topk on the concatenated lists, no rule for ties (and only 1-D)"
EXPECT = None

import torch


def merge_top_k(local_values, local_indices, starts, k):
    values = torch.cat(list(local_values))
    ids = torch.cat([i + s for i, s in zip(local_indices, starts)])
    merged = values.topk(k)
    return merged.values, ids[merged.indices]
