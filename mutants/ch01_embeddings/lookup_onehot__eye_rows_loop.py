EXERCISE = 'lookup_onehot'
MISTAKE = 'rows of a float32 identity matrix, one product per id, stacked'
EXPECT = None

import torch
import torch.nn.functional as F


def lookup_onehot(E, ids):
    eye = torch.eye(E.shape[0])
    rows = [eye[int(i)] @ E for i in ids.reshape(-1)]
    return torch.stack(rows).reshape(*ids.shape, E.shape[1])
