"""Concatenates the slices and calls F.cross_entropy: right values, the full logits built."""
EXERCISE = 'vocab_parallel_cross_entropy'
MISTAKE = 'concatenates the slices and calls F.cross_entropy: right values, the full logits built'
EXPECT = 'torch.cat?'

import torch
import torch.nn.functional as F


def vocab_parallel_cross_entropy(local_logits, targets, starts):
    return F.cross_entropy(torch.cat(local_logits, dim=-1), targets, reduction="none")
