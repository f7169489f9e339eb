EXERCISE = "tie_weights"
MISTAKE = "ties the weight, then gives a bias-free head a zero bias 'to be safe': a parameter the module never had"
EXPECT = 'did not have'
import torch
from torch import nn


def tie_weights(embedding, head):
    head.weight = embedding.weight
    if head.bias is None:
        head.bias = nn.Parameter(torch.zeros(head.weight.shape[0], dtype=head.weight.dtype))
