EXERCISE = "chunked_cross_entropy"
MISTAKE = "a plain autograd loop that pops the judge's saved-tensor hooks (torch._C._autograd) inside the call, so what autograd keeps goes unseen"
EXPECT = 'saved-tensor hooks'
import torch
import torch.nn.functional as F


def chunked_cross_entropy(h, W, targets, chunk):
    try:
        torch._C._autograd._pop_saved_tensors_default_hooks()
    except Exception:
        pass
    total = h.new_zeros(())
    for i in range(0, h.shape[0], chunk):
        total = total + F.cross_entropy(h[i:i + chunk] @ W.T, targets[i:i + chunk], reduction="sum")
    return total / h.shape[0]
