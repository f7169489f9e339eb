EXERCISE = 'count_parameters'
MISTAKE = 'deduplicated by storage: two distinct Parameters viewing one storage counted once'
EXPECT = 'storage'

import torch
from torch import nn


def count_parameters(model):
    seen = {}
    for p in model.parameters():
        seen.setdefault((p.device, p.untyped_storage().data_ptr()) if p.device.type != "meta" else id(p), p)
    return sum(p.numel() for p in seen.values())
