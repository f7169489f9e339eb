EXERCISE = 'lookup_onehot'
MISTAKE = 'flattened the ids before one_hot: returns [N, d]'
EXPECT = 'ids.shape'

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    return F.one_hot(ids.reshape(-1), num_classes=E.shape[0]).to(E.dtype) @ E
