"""Averages the chunks' means: the short last chunk weighs too much."""
EXERCISE = 'chunked_cross_entropy'
MISTAKE = "averages the chunks' means: the short last chunk weighs too much"
EXPECT = "averaged the chunks' means"

import torch
import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    means = [F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk]) for i in range(0, h.shape[0], chunk)]
    return torch.stack(means).mean()
