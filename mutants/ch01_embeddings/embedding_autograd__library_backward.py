"""F.embedding returned directly: autograd runs its own backward, not a custom Function."""
EXERCISE = 'embedding_autograd'
MISTAKE = 'F.embedding returned directly: autograd runs its own backward, not a custom Function'
EXPECT = "not your Function's node"

import torch
import torch.nn.functional as F


def embedding_autograd(E, ids):
    return F.embedding(ids, E)
