EXERCISE = "tie_weights"
MISTAKE = "rebinds BOTH modules to a new Parameter holding a copy of the embedding: they share, but the embedding's own Parameter (the one an optimiser holds) is gone"
EXPECT = "embedding's own Parameter"
from torch import nn


def tie_weights(embedding, head):
    shared = nn.Parameter(embedding.weight.detach().clone())
    embedding.weight = shared
    head.weight = shared
