EXERCISE = 'lookup_onehot'
MISTAKE = 'one_hot(...).float() @ E.float(): half-precision tables come back float32'
EXPECT = 'only the dtype differs'

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    return F.one_hot(ids, num_classes=E.shape[0]).float() @ E.float()
